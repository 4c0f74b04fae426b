'use strict';

// The serving layer's own mechanisms on raw sockets: the HTTP/0.9 check
// before Node's parser, the close grace, the per-connection pipelining
// bound and the body left unread. The wire rules every service shares are
// tested in tests/e2e (the contract's wire table). Every wait is bounded.

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const raw = require('./helpers/raw-http');
const { MAX_UNANSWERED_PER_CONNECTION } = require('../src/serving/http-server');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A connection that collects everything the server sends until it closes.
function rawSocket(port, { allowHalfOpen = false } = {}) {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen });
  const conn = { socket, text: '', closedAt: null };
  socket.on('data', (d) => { conn.text += d.toString('latin1'); });
  socket.on('error', () => {});
  conn.closed = new Promise((resolve) => socket.once('close', () => { conn.closedAt = Date.now(); resolve(); }));
  conn.connected = new Promise((resolve) => socket.once('connect', resolve));
  conn.closedWithin = (ms) => Promise.race([conn.closed.then(() => true), sleep(ms).then(() => false)]);
  return conn;
}

function statusOf(text) {
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  return match ? Number(match[1]) : null;
}

test('HTTP/0.9 request lines are answered 400 within a second', async (t) => {
  const { port } = await startService(t);
  // Empty lines before it are skipped, as Node's parser does; versions the
  // parser accepts are refused by the request listener.
  for (const text of ['\r\nGET /health\r\n', 'GET /health HTTP/0.9\r\n\r\n', 'GET /health HTTP/2.0\r\nHost: t\r\n\r\n']) {
    const conn = rawSocket(port);
    await conn.connected;
    const started = Date.now();
    conn.socket.write(text);
    assert.equal(await conn.closedWithin(1500), true, JSON.stringify(text));
    assert.ok(conn.closedAt - started < 1000, `${JSON.stringify(text)} took ${conn.closedAt - started} ms`);
    assert.equal(statusOf(conn.text), 400, `${JSON.stringify(text)}: ${conn.text}`);
  }
  // Split across writes, and on a kept-alive connection after a request.
  const split = rawSocket(port);
  await split.connected;
  split.socket.write('GET /hea');
  await sleep(50);
  split.socket.write('lth\r\n');
  assert.equal(await split.closedWithin(1500), true);
  assert.equal(statusOf(split.text), 400);

  const kept = rawSocket(port);
  await kept.connected;
  kept.socket.write(raw.get('/health'));
  await sleep(100);
  assert.equal(statusOf(kept.text), 200);
  kept.socket.write('GET /health\r\n');
  assert.equal(await kept.closedWithin(1500), true);
  assert.match(kept.text, /HTTP\/1\.1 400 Bad Request/);
});

test('a request head split across slow writes is still served', async (t) => {
  const { port } = await startService(t);
  const conn = rawSocket(port);
  await conn.connected;
  for (const piece of ['GET /health', ' HTTP/1.1\r\nHo', 'st: t\r\n', '\r\n']) {
    conn.socket.write(piece);
    await sleep(300);
  }
  assert.equal(statusOf(conn.text), 200, conn.text);
  conn.socket.destroy();
});

test('the head deadline does not cut an idle kept-alive connection', async (t) => {
  const { port } = await startService(t, { env: { HTTP_HEADER_TIMEOUT_SECONDS: '1', HTTP_KEEPALIVE_TIMEOUT_SECONDS: '5' } });
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  assert.equal((await conn.send(raw.get('/health'))).status, 200);
  assert.equal(await conn.closedWithin(2500), false);
  assert.equal((await conn.send(raw.get('/health'))).status, 200);
});

test('a client that ignores the close is cut within the grace period', async (t) => {
  const { port, server } = await startService(t);
  const conn = rawSocket(port, { allowHalfOpen: true });
  await conn.connected;
  conn.socket.write('GET /health HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\n');
  await sleep(200);
  assert.equal(statusOf(conn.text), 400);
  const count = () => new Promise((resolve) => server.getConnections((err, n) => resolve(n)));
  const deadline = Date.now() + 2500;
  while ((await count()) > 0 && Date.now() < deadline) await sleep(100);
  assert.equal(await count(), 0);
  conn.socket.destroy();
});

test('a POST whose body is read before the answer keeps its connection', async (t) => {
  const { port } = await startService(t);
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  const body = '{"Reviewer1":1}';
  const first = await conn.send(`POST /ratings/7 HTTP/1.1\r\nHost: t\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  assert.equal(first.status, 200);
  assert.equal((await conn.send(raw.get('/health'))).status, 200);
});

test('pipelined requests are answered in order, up to the per-connection limit', async (t) => {
  const { port } = await startService(t);
  const conn = rawSocket(port);
  await conn.connected;
  const ids = Array.from({ length: MAX_UNANSWERED_PER_CONNECTION }, (_, i) => i + 1);
  conn.socket.write(ids.map((id) => raw.get(`/ratings/${id}`)).join(''));
  const deadline = Date.now() + 3000;
  while ((conn.text.match(/HTTP\/1\.1 200/g) || []).length < ids.length && Date.now() < deadline) await sleep(20);
  const bodies = conn.text.match(/\{"id":\d+/g).map((s) => Number(s.slice(6)));
  assert.deepEqual(bodies, ids);
  assert.equal(await conn.closedWithin(300), false, 'still open');
  conn.socket.destroy();
});

test('beyond the limit: 503 with close after the queued answers, later requests are not run', async (t) => {
  const { port } = await startService(t);
  const conn = rawSocket(port);
  await conn.connected;
  const n = MAX_UNANSWERED_PER_CONNECTION;
  let text = '';
  for (let i = 0; i < n; i++) text += raw.get('/health');
  text += raw.get('/health');
  text += 'POST /ratings/4343 HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{"late":1}';
  conn.socket.write(text);
  assert.equal(await conn.closedWithin(3000), true);
  const statuses = [...conn.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  assert.deepEqual(statuses, [...Array(n).fill(200), 503]);
  const stored = await request(port, 'GET', '/ratings/4343');
  assert.equal(stored.body, '{"id":4343,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
});

test('a body sent after its head still arrives when the request closes the connection', async (t) => {
  for (const [env, extra] of [[{ HTTP_KEEPALIVE: 'false' }, ''], [{}, 'Connection: close\r\n']]) {
    const { port } = await startService(t, { env });
    const conn = rawSocket(port);
    await conn.connected;
    conn.socket.write(`POST /ratings/77 HTTP/1.1\r\nHost: t\r\n${extra}Content-Length: 7\r\n\r\n`);
    await sleep(100);
    conn.socket.write('{"a":1}');
    assert.equal(await conn.closedWithin(2000), true);
    assert.equal(statusOf(conn.text), 200, conn.text);
    assert.match(conn.text, /\{"id":77,"ratings":\{"a":1\}\}$/);
  }
});
