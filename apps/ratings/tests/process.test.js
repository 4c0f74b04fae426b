'use strict';

// The real process started through ./serve: start-up from another
// directory, the missing-setup message, and the SIGTERM drain.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { startServe, APP_DIR } = require('./helpers/process');
const { request } = require('./helpers/http-client');
const raw = require('./helpers/raw-http');

// Resolves with the error code of a connection attempt, or 'connected'.
function connectOutcome(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve('connected'); });
    socket.once('error', (err) => resolve(err.code));
  });
}

// Node closes idle connections a moment before the listening socket, so a
// connect right after seeing the idle close may still land in the backlog.
// Retry briefly until the port refuses.
async function refusedWithin(port, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await connectOutcome(port)) === 'ECONNREFUSED') return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return false;
}

// Sends the head of a POST and resolves once the server has answered
// "100 Continue", i.e. the request is in flight inside the service.
async function startSlowPost(port) {
  const conn = await raw.connect(port);
  const interim = await conn.send(
    'POST /ratings/1 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n' +
      'Content-Length: 7\r\nExpect: 100-continue\r\n\r\n',
  );
  assert.equal(interim.status, 100);
  return conn;
}

test('serve starts the service from any directory', async (t) => {
  const { port } = await startServe(t);
  const res = await request(port, 'GET', '/ratings/0');
  assert.equal(res.status, 200);
  assert.equal(res.body, '{"id":0,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
});

test('serve explains what is missing when setup has not run', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ratings-serve-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.copyFileSync(path.join(APP_DIR, 'serve'), path.join(dir, 'serve'));
  fs.chmodSync(path.join(dir, 'serve'), 0o755);
  const result = await new Promise((resolve) => {
    const child = spawn(path.join(dir, 'serve'), [], { cwd: '/', env: { PATH: process.env.PATH } });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    // 'close', not 'exit': stderr may still hold data when the process exits.
    child.once('close', (code) => resolve({ code, stderr }));
  });
  assert.equal(result.code, 1);
  assert.equal(result.stderr, "ratings: node_modules missing; run 'make setup'\n");
});

test('SIGTERM finishes the in-flight request, closes idle connections and exits 0', async (t) => {
  const { child, port, exited } = await startServe(t, { SHUTDOWN_TIMEOUT_SECONDS: '5' });
  const idle = await raw.connect(port);
  t.after(() => idle.destroy());
  assert.equal((await idle.send(raw.get('/health'))).status, 200);
  const slow = await startSlowPost(port);
  t.after(() => slow.destroy());

  const signalled = Date.now();
  child.kill('SIGTERM');
  assert.equal(await idle.closedWithin(2000), true, 'idle keep-alive connection closed');
  assert.equal(await refusedWithin(port, 1000), true, 'no new connections');
  assert.equal(child.exitCode, null, 'still running while a request is in flight');

  const res = await slow.send('{"a":1}');
  assert.equal(res.status, 200);
  assert.equal(res.body, '{"id":1,"ratings":{"a":1}}');
  assert.equal(res.headers.connection, 'close');

  const { code, stderr } = await exited;
  assert.equal(code, 0, stderr);
  assert.ok(Date.now() - signalled < 5000, 'exits within SHUTDOWN_TIMEOUT_SECONDS');
  assert.match(stderr, /SIGTERM: draining/);
});

test('a request on a kept-alive connection just after SIGTERM is answered with a close, not cut', async (t) => {
  const { child, port, exited } = await startServe(t, { SHUTDOWN_TIMEOUT_SECONDS: '5' });
  const conns = await Promise.all(Array.from({ length: 4 }, () => raw.connect(port)));
  t.after(() => conns.forEach((c) => c.destroy()));
  for (const c of conns) assert.equal((await c.send(raw.get('/health'))).status, 200);

  child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const answers = await Promise.all(conns.map((c) => c.send(raw.get('/ratings/1')).catch((err) => err.code ?? err.message)));
  assert.deepEqual(answers.map((r) => [r.status, r.headers?.connection]), conns.map(() => [200, 'close']));
  const { code, stderr } = await exited;
  assert.equal(code, 0, stderr);
});

test('a drain that outlasts SHUTDOWN_TIMEOUT_SECONDS is cut off on time', async (t) => {
  const { child, port, exited } = await startServe(t, { SHUTDOWN_TIMEOUT_SECONDS: '1' });
  const stuck = await startSlowPost(port);
  t.after(() => stuck.destroy());
  const signalled = Date.now();
  child.kill('SIGTERM');
  const { code, stderr } = await exited;
  const elapsed = Date.now() - signalled;
  assert.equal(code, 1, 'a forced exit is reported as status 1');
  // The upper bound leaves room for a loaded machine; the stuck request
  // alone would keep the process forever.
  assert.ok(elapsed >= 900 && elapsed < 3000, `exited after ${elapsed} ms`);
  assert.match(stderr, /shutdown timeout reached/);
  assert.equal(await stuck.closedWithin(1000), true);
});

test('SIGINT drains like SIGTERM; an idle service exits 0 at once', async (t) => {
  const { child, exited } = await startServe(t);
  const signalled = Date.now();
  child.kill('SIGINT');
  const { code } = await exited;
  assert.equal(code, 0);
  assert.ok(Date.now() - signalled < 3000, 'does not wait for the 10 s timeout');
});
