'use strict';

// The node:http server under Express: the HTTP knobs, and docs/contract.md's wire rules that
// Node's parser leaves to the application (DESIGN.md, "Hostile input").

const http = require('node:http');

function errorBody(status) {
  return JSON.stringify({ error: http.STATUS_CODES[status].toLowerCase() });
}

// An answer where there is no response object ('clientError', CONNECT).
function framedError(status) {
  const body = errorBody(status);
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

const CLIENT_ERROR_STATUS = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

// Beyond HTTP_MAX_CONNECTIONS (DESIGN.md, "How each knob is implemented").
const MAX_WAITING_CONNECTIONS = 511;
const FEED_BYTES = 1024;
// Pipelining without reading, and the closes below: DESIGN.md, "Hostile input".
const MAX_UNANSWERED_PER_CONNECTION = 16;
const CLOSE_GRACE_MS = 1000;
const HTTP09_ANSWER_MS = 500;
const HTTP09_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+$/;
const FIRST_LINE_MAX = 8192;
// Host = uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2).
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

const connections = new WeakMap();

function stateOf(socket) {
  let state = connections.get(socket);
  if (state === undefined) {
    state = {
      unanswered: 0, // requests handed to the app whose response has not closed
      closing: false, // no further request on this connection is processed
      cutOnData: false, // closing after an error or refusal: more bytes end the connection
      requests: 0, // requests dispatched by Node's parser
      ignored: 0, // requests dispatched after the close was decided
      last: null, // the last of them
      firstLine: '', // start of the next request head while it is looked at; null when not
      began: null, // when the chunk that began the next request was read (hrtime)
      pendingAnswer: null, // a clientError answer waiting for the app's answers before it
      graceTimer: null,
      http09Timer: null,
    };
    connections.set(socket, state);
  }
  return state;
}

// Destroys the socket CLOSE_GRACE_MS from now unless it has closed by then.
function closeWithin(socket, state) {
  if (state.graceTimer !== null || socket.destroyed) return;
  state.graceTimer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

// An error answer written to the socket, then the close.
function refuse(socket, state, answer) {
  state.closing = true;
  state.cutOnData = true;
  if (socket.writable) socket.end(answer);
  closeWithin(socket, state);
}

// The answer goes after those the app still owes here, unless the error is in the body of the
// request in progress (its answer); none when a close is decided (its answer is on its way).
function onClientError(err, socket) {
  // A connection that sent nothing by the head deadline began no request.
  if (err.code === 'ECONNRESET' || !socket.writable || (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0)) {
    socket.destroy();
    return;
  }
  const state = stateOf(socket);
  if (state.closing) {
    if (state.unanswered === 0) closeWithin(socket, state);
    return;
  }
  const answer = framedError(CLIENT_ERROR_STATUS[err.code] ?? 400);
  if (state.unanswered > 0 && (state.last === null || state.last.complete)) {
    state.closing = true;
    state.cutOnData = true;
    state.pendingAnswer = answer;
    return;
  }
  refuse(socket, state, answer);
}

// Called when an answer of the app has gone out (or its client left).
function answered(socket, state) {
  state.unanswered -= 1;
  if (state.unanswered > 0) return;
  if (!state.closing) feed(socket, state);
  else if (state.pendingAnswer === null) closeWithin(socket, state);
  else refuse(socket, state, state.pendingAnswer);
}

// HTTP/0.9 request lines (DESIGN.md, "Hostile input"), before Node's parser.
function onData(socket, state, chunk) {
  if (state.firstLine === null) {
    if (state.unanswered > 0 || (state.last !== null && !state.last.complete)) return;
    state.firstLine = '';
  }
  if (state.firstLine === '') state.began = process.hrtime.bigint();
  // Node's parser skips empty lines before a request line, so does this.
  const text = (state.firstLine + chunk.toString('latin1', 0, FIRST_LINE_MAX)).replace(/^[\r\n]+/, '');
  const lf = text.indexOf('\n');
  if (lf < 0) {
    state.firstLine = text.length < FIRST_LINE_MAX ? text : null;
    return;
  }
  state.firstLine = null;
  if (!HTTP09_LINE.test(text.slice(0, lf).replace(/\r$/, ''))) return;
  const requestsBefore = state.requests;
  clearTimeout(state.http09Timer);
  state.http09Timer = setTimeout(() => {
    if (state.requests === requestsBefore && !socket.destroyed) refuse(socket, state, framedError(400));
  }, HTTP09_ANSWER_MS).unref();
}

// FEED_BYTES at a time to Node's parser, only while no answer is owed or a body is to come.
function feed(socket, state) {
  while (!socket.destroyed && socket.readableLength > 0) {
    const inBody = state.last !== null && !state.last.complete;
    if (!inBody && (state.closing || state.unanswered > 0)) {
      if (state.closing && state.cutOnData) socket.destroy();
      return;
    }
    socket.read(Math.min(FEED_BYTES, socket.readableLength));
  }
}

function onConnection(socket) {
  const state = stateOf(socket);
  // Paused mode: the parser sees what socket.read hands out; prepended, so this runs first.
  socket.prependListener('data', (chunk) => onData(socket, state, chunk));
  socket.on('readable', () => feed(socket, state));
  socket.once('close', () => {
    clearTimeout(state.graceTimer);
    clearTimeout(state.http09Timer);
  });
}

// RFC 9112 9.6: "close" in any Connection field (node joins them with ", "), or 1.0 without keep-alive.
function lastOnConnection(req) {
  const tokens = (req.headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  if (tokens.includes('close')) return true;
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 0 && !tokens.includes('keep-alive');
}

// RFC 9112 3.2: no Host in 1.1, two Host lines (Node silently keeps the first), or an invalid one.
function badHost(req) {
  const hosts = req.headersDistinct.host;
  if (hosts === undefined) return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
  return hosts.length !== 1 || !HOST.test(hosts[0]);
}

// One answer per request (DESIGN.md, "Hostile input"), wrapping writeHead.
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

// Through the response, so that it goes out after the answers owed before it.
function answerAndClose(socket, res, state, status) {
  state.closing = true;
  state.cutOnData = true;
  const body = errorBody(status);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  res.end(body);
  closeWithin(socket, state);
}

// The checks above, then the app. connection.close (HTTP_KEEPALIVE false, or a drain has begun):
// every response closes its connection, so later pipelined requests are not run.
function createRequestListener(app, connection) {
  return (req, res) => {
    const socket = req.socket;
    const state = stateOf(socket);
    state.requests += 1;
    state.last = req;
    state.firstLine = null;
    // Server-Timing's start (server-timing.js): the chunk with its first byte read, or (behind another) now.
    req.began = state.began ?? process.hrtime.bigint();
    state.began = null;
    // A close is decided: not run, no answer; after a refusal, a client still sending is cut.
    if (state.closing) {
      state.ignored += 1;
      if (state.cutOnData && state.ignored >= MAX_UNANSWERED_PER_CONNECTION) socket.destroy();
      return;
    }
    if (state.unanswered >= MAX_UNANSWERED_PER_CONNECTION) {
      answerAndClose(socket, res, state, 503);
      return;
    }
    // Not HTTP/1.x, a bad Host, or a Transfer-Encoding other than exactly
    // chunked ("gzip, chunked" passes Node's parser; nothing here decodes it).
    const te = req.headers['transfer-encoding'];
    if (req.httpVersionMajor !== 1 || badHost(req) || (te !== undefined && te.trim().toLowerCase() !== 'chunked')) {
      answerAndClose(socket, res, state, 400);
      return;
    }
    if (connection.close || lastOnConnection(req)) state.closing = true;
    state.unanswered += 1;
    res.once('close', () => answered(socket, state));
    closeIfBodyUnread(req, res, state);
    app(req, res);
  };
}

// HTTP_MAX_CONNECTIONS as a backlog (DESIGN.md, "How each knob is implemented").
class LimitedServer extends http.Server {
  constructor(options, listener, max) {
    super(options, listener);
    this.held = 0;
    this.max = max;
    this.waiting = [];
  }

  emit(event, socket, ...rest) {
    if (event !== 'connection') return super.emit(event, socket, ...rest);
    if (this.held < this.max) {
      this.held += 1;
      socket.once('close', () => this.release());
      return super.emit(event, socket);
    }
    if (this.waiting.length >= MAX_WAITING_CONNECTIONS) {
      socket.destroy();
      return true;
    }
    this.waiting.push(socket);
    socket.on('error', ignore);
    socket.once('close', () => {
      const i = this.waiting.indexOf(socket);
      if (i >= 0) this.waiting.splice(i, 1);
    });
    return true;
  }

  release() {
    this.held -= 1;
    while (this.held < this.max && this.waiting.length > 0) {
      const next = this.waiting.shift();
      next.off('error', ignore);
      if (!next.destroyed) this.emit('connection', next);
    }
  }
}

function ignore() {}

function createHttpServer(app, config, connection = { close: !config.keepAlive }) {
  const headersTimeout = config.headerTimeoutSeconds * 1000;
  const server = new LimitedServer(
    {
      // DESIGN.md, "How each knob is implemented", says what each does here.
      noDelay: config.noDelay,
      headersTimeout,
      connectionsCheckingInterval: 500,
      requestTimeout: headersTimeout,
      // Checked by the request listener instead, to answer with a JSON body.
      requireHostHeader: false,
    },
    createRequestListener(app, connection),
    config.maxConnections,
  );
  server.keepAliveTimeout = config.keepAliveTimeoutSeconds * 1000;
  server.on('connection', onConnection);
  server.on('clientError', onClientError);
  // CONNECT is no route here: the 404 the other services answer.
  server.on('connect', (req, socket) => refuse(socket, stateOf(socket), framedError(404)));
  return server;
}

module.exports = { createHttpServer, MAX_UNANSWERED_PER_CONNECTION, MAX_WAITING_CONNECTIONS, CLOSE_GRACE_MS, HTTP09_ANSWER_MS };
