'use strict';

// Every response leaves through send(). It writes the exact upstream
// Content-Type (res.json would add "; charset=utf-8" and hash an ETag) and
// always sets Content-Length, so a response is framed even when the
// connection closes after it. The Connection header is decided here, at send
// time, because a drain can begin while a (delayed) request is in flight.
// Being the one exit also makes it the cheapest place to observe responses:
// no per-request listener is needed.

const JSON_TYPE = 'application/json';

// Status observed for a request whose client went away before the answer
// (nginx's "client closed request"), so it is not counted as a success.
const CLIENT_CLOSED = 499;

function createResponder(connection, onSent) {
  function send(res, status, contentType, body, extra) {
    const clientGone = res.req.socket.destroyed;
    // Handed to writeHead in one object rather than set one by one with
    // setHeader: nothing else sets headers on these responses, so Node then
    // formats this object directly instead of first copying every header
    // into its own per-response header map.
    const headers = { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) };
    if (connection.close) headers.Connection = 'close';
    if (extra !== undefined) Object.assign(headers, extra);
    res.writeHead(status, headers);
    // Node drops the body itself for HEAD and keeps Content-Length.
    res.end(body);
    onSent(res, clientGone ? CLIENT_CLOSED : status);
  }

  function json(res, status, value, headers) {
    send(res, status, JSON_TYPE, JSON.stringify(value), headers);
  }

  // For a response that will never be sent because the client left.
  function abandoned(res) {
    onSent(res, CLIENT_CLOSED);
  }

  return { send, json, abandoned };
}

module.exports = { createResponder, JSON_TYPE, CLIENT_CLOSED };
