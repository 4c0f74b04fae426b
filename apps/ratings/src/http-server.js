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

// Set on each request when node:http creates it, i.e. once its headers are
// parsed: the start of the request duration the metrics and access log report.
const RECEIVED_AT = Symbol('receivedAt');

// Express re-parents every request and response onto app.request and
// app.response (Object.setPrototypeOf in app.handle). Changing an object's
// prototype gives it a new hidden class, which V8 pays for on every request
// and in every property access after it. Instead, node:http builds them from
// these subclasses, whose prototypes sit between Express's and Node's
// (Request.prototype -> Express's app.request -> ... -> IncomingMessage),
// and app.request / app.response are pointed at them: Express's call then
// finds the prototype already in place, which V8 treats as a no-op. Express
// sees the same methods and getters as before. Only for an Express app (the
// unit test of the options passes a plain function); createService calls
// this once per app.
function messageClasses(app) {
  if (app.request === undefined || app.response === undefined) return {};
  class Request extends http.IncomingMessage {
    constructor(socket) {
      super(socket);
      this[RECEIVED_AT] = performance.now();
    }
  }
  class Response extends http.ServerResponse {}
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  app.request = Request.prototype;
  app.response = Response.prototype;
  return { IncomingMessage: Request, ServerResponse: Response };
}

function createHttpServer(app, config) {
  // noDelay makes Node call setNoDelay on each accepted socket's handle
  // before any JavaScript sees it; false leaves the kernel default (Nagle on).
  // IncomingMessage / ServerResponse: see messageClasses above.
  const server = http.createServer({ noDelay: config.noDelay, ...messageClasses(app) }, app);
  // Idle time between requests on a kept-alive socket. headersTimeout
  // (60 s) and requestTimeout (300 s) stay at Node's defaults: since Node 18
  // they only run while a request is being received, so a long idle
  // keep-alive does not trip them.
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  server.on('clientError', onClientError);
  return server;
}

module.exports = { createHttpServer, RECEIVED_AT };
