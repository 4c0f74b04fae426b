'use strict';

// The node:http server under Express, where the HTTP knobs take effect.

const http = require('node:http');

// Node's answer to a request its parser rejects carries no Content-Length
// (the body is delimited by the close). The 'clientError' event is Node's
// documented hook for answering these instead: there is no request or
// response object yet, so the answer is written to the socket as bytes.
// Same status per error code as Node's own default; a JSON body like every
// other error; Connection: close.
function framedError(status) {
  const body = JSON.stringify({ error: http.STATUS_CODES[status].toLowerCase() });
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

const CLIENT_ERROR_ANSWERS = {
  HPE_HEADER_OVERFLOW: framedError(431),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: framedError(413),
  ERR_HTTP_REQUEST_TIMEOUT: framedError(408),
};
const BAD_REQUEST = framedError(400);

// Every response of this service is queued on the socket in full by one
// res.end, so an answer written here lands after any earlier response on a
// kept-alive connection, never inside one. (One still to be written, a
// v-delayed answer, is lost with the connection: Node's default handler
// does the same.)
function onClientError(err, socket) {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(CLIENT_ERROR_ANSWERS[err.code] ?? BAD_REQUEST);
}

function createHttpServer(app, config) {
  // noDelay: Node sets TCP_NODELAY on each accepted socket when true (its
  // default); false leaves the kernel default, Nagle on.
  const server = http.createServer({ noDelay: config.noDelay }, app);
  // Idle time between requests on a kept-alive socket, advertised as
  // "Keep-Alive: timeout=N".
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  server.on('clientError', onClientError);
  return server;
}

module.exports = { createHttpServer };
