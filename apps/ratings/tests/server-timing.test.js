'use strict';

// The Server-Timing header (docs/contract.md): app;dur=<ms> on every answer
// Express writes, none with SERVER_TIMING=false.

const test = require('node:test');
const assert = require('node:assert/strict');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const raw = require('./helpers/raw-http');

const APP_ONLY = /^app;dur=(\d+\.\d{3})$/;

function appMs(res) {
  const match = APP_ONLY.exec(res.headers['server-timing'] || '');
  assert.ok(match, `Server-Timing ${JSON.stringify(res.headers['server-timing'])} is not app;dur=<ms>`);
  return Number(match[1]);
}

test('every route answers with app;dur, errors and HEAD included', async (t) => {
  const { port } = await startService(t);
  const cases = [
    ['GET', '/ratings/0', 200],
    ['HEAD', '/ratings/0', 200],
    ['POST', '/ratings/3', 200, '{"Reviewer1":1}'],
    ['POST', '/ratings/3', 400, 'not json'],
    ['GET', '/ratings/abc', 400],
    ['GET', '/health', 200],
    ['GET', '/metrics', 200],
    ['DELETE', '/ratings/0', 405],
    ['GET', '/nowhere', 404],
  ];
  for (const [method, path, status, body] of cases) {
    await t.test(`${method} ${path}`, async () => {
      const res = await request(port, method, path, { body });
      assert.equal(res.status, status);
      assert.ok(appMs(res) >= 0);
    });
  }
});

test('an answer written later still carries its whole time (v-delayed)', async (t) => {
  const held = [];
  const schedule = (fn) => { held.push(fn); return () => {}; };
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-delayed' }, random: () => 0, schedule });
  const pending = request(port, 'GET', '/ratings/1');
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  held[0]();
  const res = await pending;
  assert.equal(res.status, 200);
  assert.ok(appMs(res) >= 50, `app;dur=${appMs(res)} ms for an answer held 50 ms`);
});

test('the time starts at the request\'s first byte, on a new and on a kept-alive connection', async (t) => {
  const { port } = await startService(t);
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  const text = raw.get('/ratings/0');
  for (const round of ['new', 'kept-alive']) {
    conn.socket.write(text.slice(0, 5));
    // 100 ms apart, at least 50 counted: the server may read the first part late on a busy machine.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const res = await conn.send(text.slice(5));
    assert.equal(res.status, 200, round);
    assert.ok(appMs(res) >= 50, `${round}: app;dur=${appMs(res)} ms for a head cut 100 ms after its first bytes`);
  }
});

test('SERVER_TIMING=false sends no header', async (t) => {
  const { port } = await startService(t, { env: { SERVER_TIMING: 'false' } });
  for (const path of ['/ratings/0', '/nowhere']) {
    const res = await request(port, 'GET', path);
    assert.equal(res.headers['server-timing'], undefined, path);
  }
});
