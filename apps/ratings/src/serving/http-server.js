'use strict';

// The node:http server under Express, where the HTTP knobs take effect, and
// the checks Node's parser leaves to the application (DESIGN.md, "Hostile
// input"): Host, Transfer-Encoding, HTTP/0.9, pipelining without bound,
// one answer per request, CONNECT, and the connection limit.

const http = require('node:http');

// Answers written to the socket as bytes ('clientError', CONNECT: there is
// no response object), framed by Content-Length, with Node's status per
// error code and a JSON body like every other error.
function errorBody(status) {
  return JSON.stringify({ error: http.STATUS_CODES[status].toLowerCase() });
}

function framedError(status) {
  const body = errorBody(status);
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
// CONNECT is no route here: the 404 the other services answer.
const CONNECT_ANSWER = framedError(404);

// Connections waiting for a slot beyond HTTP_MAX_CONNECTIONS, paused (not
// read) until one frees: the listen backlog's job in the other services,
// whose servers stop accepting; Node always accepts. Bounded like a backlog
// (Node's default of 511); beyond it a new connection is closed at once.
const MAX_WAITING_CONNECTIONS = 511;

const FEED_BYTES = 1024;

// Unanswered requests one connection may have in the service at once; the
// next gets 503 + close, the rest no answer (RFC 9112 9.3.2: the client
// retries them on a new connection).
const MAX_UNANSWERED_PER_CONNECTION = 16;

// Once a close is decided, the client gets this long to read what is
// queued for it; then the socket is destroyed.
const CLOSE_GRACE_MS = 1000;

// A request line without an HTTP version is HTTP/0.9, which Node's parser
// takes for the start of a head: this long after such a line, with still no
// request, the connection is answered 400 and closed.
const HTTP09_ANSWER_MS = 500;
// method SP request-target, nothing after: no version.
const HTTP09_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+$/;
const FIRST_LINE_MAX = 8192;

// Host = uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2): an IP
// literal in brackets or a reg-name (possibly empty), then digits.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

const connections = new WeakMap();

function newConnectionState() {
  return {
    unanswered: 0, // requests handed to the app whose response has not closed
    closing: false, // no further request on this connection is processed
    cutOnData: false, // closing after an error or refusal: more bytes from the client end the connection
    requests: 0, // requests dispatched by Node's parser
    ignored: 0, // requests dispatched after the close was decided
    last: null, // the last of them
    firstLine: '', // start of the next request head while it is being looked at; null when not
    pendingAnswer: null, // a clientError answer waiting for the app's answers before it
    graceTimer: null,
    http09Timer: null,
    waiting: false, // beyond the connection limit: not read until a slot frees
  };
}

function stateOf(socket) {
  let state = connections.get(socket);
  if (state === undefined) {
    state = newConnectionState();
    connections.set(socket, state);
  }
  return state;
}

// Destroys the socket CLOSE_GRACE_MS from now unless it has closed by then.
function closeWithin(socket, state) {
  if (state.graceTimer !== null || socket.destroyed) return;
  state.graceTimer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  state.graceTimer.unref();
}

// The answer goes after every answer the app still owes on this connection.
// None when a close is already decided: its answer is sent or on its way.
function onClientError(err, socket) {
  // A connection that sent nothing by the head deadline began no request:
  // it is closed without an answer, as the other services do.
  if (err.code === 'ECONNRESET' || !socket.writable || (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0)) {
    socket.destroy();
    return;
  }
  const state = stateOf(socket);
  if (state.closing) {
    if (state.unanswered === 0) closeWithin(socket, state);
    return;
  }
  state.closing = true;
  state.cutOnData = true;
  const answer = CLIENT_ERROR_ANSWERS[err.code] ?? BAD_REQUEST;
  // An error in the body of the request in progress is that request's answer.
  const inBody = state.last !== null && !state.last.complete;
  if (state.unanswered > 0 && !inBody) {
    state.pendingAnswer = answer;
    return;
  }
  endWith(socket, state, answer);
}

function endWith(socket, state, answer) {
  socket.end(answer);
  closeWithin(socket, state);
}

// Called when an answer of the app has gone out (or its client left).
function answered(socket, state) {
  state.unanswered -= 1;
  if (state.unanswered > 0) return;
  if (!state.closing) {
    feed(socket, state);
    return;
  }
  if (state.pendingAnswer === null) {
    closeWithin(socket, state);
    return;
  }
  const answer = state.pendingAnswer;
  state.pendingAnswer = null;
  if (socket.writable) endWith(socket, state, answer);
  else closeWithin(socket, state);
}

// True when the connection has nothing in progress, so the next byte that
// arrives starts a request head (for a client that does not pipeline).
function quiescent(state) {
  return state.unanswered === 0 && (state.last === null || state.last.complete);
}

// Looks at the first line of a request head before Node's parser: an
// HTTP/0.9 request line is answered 400 unless a request comes out of the
// parser within HTTP09_ANSWER_MS (a head split across reads costs nothing).
function onData(socket, state, chunk) {
  if (state.firstLine === null) {
    if (!quiescent(state)) return;
    state.firstLine = '';
  }
  let start = 0;
  // Node's parser skips empty lines before a request line, so does this.
  if (state.firstLine === '') {
    while (start < chunk.length && (chunk[start] === 0x0d || chunk[start] === 0x0a)) start += 1;
    if (start === chunk.length) return;
  }
  const lf = chunk.indexOf(0x0a, start);
  const stop = lf < 0 ? Math.min(chunk.length, start + FIRST_LINE_MAX) : lf;
  const line = state.firstLine + chunk.toString('latin1', start, stop);
  if (lf < 0) {
    state.firstLine = line.length < FIRST_LINE_MAX ? line : null;
    return;
  }
  state.firstLine = null;
  if (!HTTP09_LINE.test(line.endsWith('\r') ? line.slice(0, -1) : line)) return;
  const requestsBefore = state.requests;
  clearTimeout(state.http09Timer);
  state.http09Timer = setTimeout(() => {
    if (state.requests !== requestsBefore || socket.destroyed || !socket.writable) return;
    state.closing = true;
    state.cutOnData = true;
    endWith(socket, state, BAD_REQUEST);
  }, HTTP09_ANSWER_MS);
  state.http09Timer.unref();
}

// Bytes reach Node's parser at most FEED_BYTES at a time, and only while the
// connection owes no answer or the request in progress still has body to
// come: a client that does not read its answers is not read either (its
// bytes wait in the socket's buffer, then in the kernel's), and a 64 KiB
// read of pipelined requests is not parsed into a thousand requests at once.
function feed(socket, state) {
  while (!socket.destroyed && socket.readableLength > 0 && !state.waiting) {
    const inBody = state.last !== null && !state.last.complete;
    if (!inBody && (state.closing || state.unanswered > 0)) {
      // After an error answer or a refusal, more bytes end the connection.
      if (state.closing && state.cutOnData) socket.destroy();
      return;
    }
    socket.read(Math.min(FEED_BYTES, socket.readableLength));
  }
}

function onConnection(socket) {
  const state = stateOf(socket);
  // Paused mode: Node's parser sees what socket.read hands out ('data'
  // listeners see what the parser sees); prepended, so this runs before it.
  socket.prependListener('data', (chunk) => onData(socket, state, chunk));
  socket.on('readable', () => feed(socket, state));
  socket.once('close', () => {
    clearTimeout(state.graceTimer);
    clearTimeout(state.http09Timer);
  });
}

// Whether this request ends its connection: "Connection: close", or HTTP/1.0
// without keep-alive. RFC 9112 9.6: no further request on it is processed.
function lastOnConnection(req) {
  const tokens = (req.headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  if (tokens.includes('close')) return true;
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 0 && !tokens.includes('keep-alive');
}

// RFC 9112 3.2: 400 for an HTTP/1.1 request without Host, and for any
// request with more than one Host line or an invalid value.
function badHost(req) {
  const hosts = req.headersDistinct.host;
  if (hosts === undefined) return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
  return hosts.length !== 1 || !HOST.test(hosts[0]);
}

// Node's parser rejects Transfer-Encoding with Content-Length, and a request
// Transfer-Encoding whose last coding is not chunked; "gzip, chunked" passes
// it, and ratings decodes no transfer coding but chunked.
function badTransferEncoding(req) {
  const te = req.headers['transfer-encoding'];
  return te !== undefined && te.trim().toLowerCase() !== 'chunked';
}

// One answer per request: a route that answers before the request's body
// has arrived whole (GET, HEAD, 404, 405 do not read it) says
// "Connection: close", so what is left of the body meets a closing
// connection and gets no second answer. Node has no "before the head goes
// out" event; wrapping this response's writeHead is how the expressjs
// on-headers module does it.
function closeIfBodyUnread(req, res, state) {
  const cl = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (cl === undefined || Number(cl) === 0)) return;
  const writeHead = res.writeHead;
  res.writeHead = function writeHeadOnce(...args) {
    if (!this.headersSent && !req.complete) {
      state.closing = true;
      this.setHeader('Connection', 'close');
    }
    return writeHead.apply(this, args);
  };
}

function onConnect(req, socket) {
  const state = stateOf(socket);
  state.closing = true;
  state.cutOnData = true;
  if (socket.writable) endWith(socket, state, CONNECT_ANSWER);
  else socket.destroy();
}

// Holds at most `max` connections at once; the next ones wait, paused, in
// arrival order, and each starts being read when a held one closes (so its
// head deadline, counted by Node from the accept, includes the wait).
function limitConnections(server, max) {
  let held = 0;
  const waiting = [];
  function release() {
    held -= 1;
    while (waiting.length > 0 && held < max) {
      const next = waiting.shift();
      if (next.destroyed) continue;
      held += 1;
      next.once('close', release);
      stateOf(next).waiting = false;
      feed(next, stateOf(next));
    }
  }
  server.on('connection', (socket) => {
    if (held < max) {
      held += 1;
      socket.once('close', release);
      return;
    }
    if (waiting.length >= MAX_WAITING_CONNECTIONS) {
      socket.destroy();
      return;
    }
    stateOf(socket).waiting = true;
    waiting.push(socket);
    socket.once('close', () => {
      const i = waiting.indexOf(socket);
      if (i >= 0) waiting.splice(i, 1);
    });
  });
}

function answerAndClose(res, status) {
  const body = errorBody(status);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

// The server's request listener: the checks above, then the Express app.
// connection.close: every response closes its connection (HTTP_KEEPALIVE
// false, or a drain has begun), so later pipelined requests are not run.
function createRequestListener(app, connection) {
  return (req, res) => {
    const socket = req.socket;
    const state = stateOf(socket);
    state.requests += 1;
    state.last = req;
    state.firstLine = null;
    // A close has been decided: the request is not run and gets no answer.
    // After a refusal or an error answer, a client that goes on sending as
    // many requests again does not read its answers either: end it now.
    if (state.closing) {
      state.ignored += 1;
      if (state.cutOnData && state.ignored >= MAX_UNANSWERED_PER_CONNECTION) socket.destroy();
      return;
    }
    if (state.unanswered >= MAX_UNANSWERED_PER_CONNECTION) {
      state.closing = true;
      state.cutOnData = true;
      answerAndClose(res, 503);
      closeWithin(socket, state);
      return;
    }
    if (req.httpVersionMajor !== 1 || badHost(req) || badTransferEncoding(req)) {
      state.closing = true;
      state.cutOnData = true;
      answerAndClose(res, 400);
      closeWithin(socket, state);
      return;
    }
    if (connection.close || lastOnConnection(req)) state.closing = true;
    state.unanswered += 1;
    res.once('close', () => answered(socket, state));
    closeIfBodyUnread(req, res, state);
    app(req, res);
  };
}

function createHttpServer(app, config, connection = { close: !config.keepAlive }) {
  const headersTimeout = config.headerTimeoutSeconds * 1000;
  const server = http.createServer(
    {
      // false leaves the kernel default, Nagle on.
      noDelay: config.noDelay,
      // A request head must be complete this long after its first byte
      // (the first head: after the accept).
      headersTimeout,
      connectionsCheckingInterval: 500,
      // Whole request, head and body (at most 16 KiB), from its first byte:
      // the same deadline, so a huge chunk size cannot hold the connection.
      requestTimeout: headersTimeout,
      // Checked by the request listener instead, to answer with a JSON body.
      requireHostHeader: false,
    },
    createRequestListener(app, connection),
  );
  // Not server.maxConnections: beyond it Node closes each new connection
  // with no answer, where the other services leave it in the backlog.
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  server.on('connection', onConnection);
  limitConnections(server, config.maxConnections);
  server.on('clientError', onClientError);
  server.on('connect', onConnect);
  return server;
}

module.exports = { createHttpServer, MAX_UNANSWERED_PER_CONNECTION, MAX_WAITING_CONNECTIONS, CLOSE_GRACE_MS, HTTP09_ANSWER_MS };
