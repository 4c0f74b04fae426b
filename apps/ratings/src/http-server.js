'use strict';

// The node:http server under Express, where the HTTP knobs take effect.

const http = require('node:http');

// Errors the parser raises before a request object exists. Node's default
// answers are unframed; ours carry Content-Length and a JSON body like every
// other response, mirroring Node's own choice of status per error code.
const CLIENT_ERROR_STATUS = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

function onClientError(err, socket) {
  // Like Node's default handler: say nothing if the peer is gone or a
  // response on this socket has already started.
  const inResponse = socket._httpMessage && socket._httpMessage.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || inResponse) {
    socket.destroy();
    return;
  }
  const status = CLIENT_ERROR_STATUS[err.code] ?? 400;
  const body = JSON.stringify({ error: http.STATUS_CODES[status].toLowerCase() });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

function createHttpServer(app, config) {
  // noDelay makes Node call setNoDelay on each accepted socket's handle
  // before any JavaScript sees it; false leaves the kernel default (Nagle on).
  const server = http.createServer({ noDelay: config.noDelay }, app);
  // Idle time between requests on a kept-alive socket. headersTimeout
  // (60 s) and requestTimeout (300 s) stay at Node's defaults: since Node 18
  // they only run while a request is being received, so a long idle
  // keep-alive does not trip them.
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  server.on('clientError', onClientError);
  return server;
}

module.exports = { createHttpServer };
