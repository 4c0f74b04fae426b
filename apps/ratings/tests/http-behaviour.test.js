'use strict';

// Common HTTP behaviour from docs/configuration.md: 404/405/HEAD, framing,
// keep-alive on and off, the keep-alive idle timeout, parser errors.

const test = require('node:test');
const assert = require('node:assert/strict');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const raw = require('./helpers/raw-http');
const { createHttpServer } = require('../src/serving/http-server');
const { MAX_BODY_BYTES } = require('../src/app');

test('unknown paths answer 404 JSON for every method', async (t) => {
  const { port } = await startService(t);
  const cases = [['GET', '/'], ['GET', '/nope'], ['POST', '/nope'], ['DELETE', '/x/y'], ['GET', '/ratings/1/extra'], ['GET', '/Health']];
  for (const [method, path] of cases) {
    const res = await request(port, method, path);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.body, '{"error":"not found"}');
  }
});

test('known paths answer 405 JSON with Allow for methods they do not serve', async (t) => {
  const { port } = await startService(t);
  const cases = [
    ['PUT', '/ratings/1', 'GET, HEAD, POST'],
    ['DELETE', '/ratings/1', 'GET, HEAD, POST'],
    ['PATCH', '/ratings', 'GET, HEAD, POST'],
    ['OPTIONS', '/ratings/1', 'GET, HEAD, POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/metrics', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    const res = await request(port, method, path);
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.allow, allow);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.body, '{"error":"method not allowed"}');
  }
});

test('HEAD answers like GET without a body', async (t) => {
  const { port } = await startService(t);
  for (const path of ['/ratings/0', '/health', '/ratings/abc', '/nope']) {
    const get = await request(port, 'GET', path);
    const head = await request(port, 'HEAD', path);
    assert.equal(head.status, get.status, path);
    assert.equal(head.headers['content-type'], get.headers['content-type']);
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)));
    assert.equal(head.body, '');
  }
});

test('responses carry no X-Powered-By and no ETag', async (t) => {
  const { port } = await startService(t);
  const res = await request(port, 'GET', '/ratings/0');
  assert.equal(res.headers['x-powered-by'], undefined);
  assert.equal(res.headers.etag, undefined);
});

// One raw request per kind of response the service produces.
const FRAMING_CASES = [
  ['GET ok', raw.get('/ratings/0'), 200],
  ['GET health', raw.get('/health'), 200],
  ['GET metrics', raw.get('/metrics'), 200],
  ['GET bad id', raw.get('/ratings/x'), 400],
  ['GET unknown', raw.get('/nope'), 404],
  ['DELETE', 'DELETE /ratings/1 HTTP/1.1\r\nHost: t\r\n\r\n', 405],
  ['POST ok', 'POST /ratings/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\n\r\n{"a":1}', 200],
  ['POST bad JSON', 'POST /ratings/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\n{"a', 400],
  ['POST too large', `POST /ratings/1 HTTP/1.1\r\nHost: t\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n${'x'.repeat(MAX_BODY_BYTES + 1)}`, 413],
  ['HEAD', 'HEAD /ratings/0 HTTP/1.1\r\nHost: t\r\n\r\n', 200, { head: true }],
  ['HTTP/1.0', 'GET /ratings/0 HTTP/1.0\r\n\r\n', 200],
];

for (const keepAlive of ['true', 'false']) {
  test(`every response is framed with HTTP_KEEPALIVE=${keepAlive}`, async (t) => {
    const { port } = await startService(t, { env: { HTTP_KEEPALIVE: keepAlive } });
    for (const [name, text, status, options] of FRAMING_CASES) {
      await t.test(name, async () => {
        const conn = await raw.connect(port);
        try {
          // raw.send only resolves on a Content-Length or chunked response.
          const res = await conn.send(text, options);
          assert.equal(res.status, status);
          assert.ok(res.headers['content-length'] !== undefined || res.headers['transfer-encoding'] === 'chunked');
          if (keepAlive === 'false') {
            assert.equal(res.headers.connection, 'close');
            assert.equal(await conn.closedWithin(2000), true, 'server closes after the response');
          }
        } finally {
          conn.destroy();
        }
      });
    }
  });
}

test('HTTP_KEEPALIVE=true serves several requests on one connection and keeps it open', async (t) => {
  const { port } = await startService(t);
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  const first = await conn.send(raw.get('/ratings/0'));
  const second = await conn.send(raw.get('/ratings/1'));
  assert.equal(first.status, 200);
  assert.equal(second.body, '{"id":1,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
  assert.equal(second.headers.connection, 'keep-alive');
  assert.equal(second.headers['keep-alive'], 'timeout=60');
  assert.equal(await conn.closedWithin(200), false);
});

test('HTTP_KEEPALIVE=false closes the connection even when the client asks to keep it', async (t) => {
  const { port } = await startService(t, { env: { HTTP_KEEPALIVE: 'false' } });
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  const res = await conn.send(raw.get('/ratings/0', 'Connection: keep-alive\r\n'));
  assert.equal(res.status, 200);
  assert.equal(res.body, '{"id":0,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
  assert.equal(res.headers.connection, 'close');
  assert.equal(await conn.closedWithin(2000), true);
});

test('HTTP_KEEPALIVE_TIMEOUT_SECONDS closes an idle kept-alive connection after that time', async (t) => {
  const { port } = await startService(t, { env: { HTTP_KEEPALIVE_TIMEOUT_SECONDS: '1' } });
  const conn = await raw.connect(port);
  t.after(() => conn.destroy());
  const started = Date.now();
  const res = await conn.send(raw.get('/health'));
  assert.equal(res.headers['keep-alive'], 'timeout=1');
  assert.equal(await conn.closedWithin(700), false, 'still open well before the timeout');
  // Node 20.20 arms the idle timer at the advertised timeout + 1 s.
  assert.equal(await conn.closedWithin(3000), true, 'closed once idle for the timeout');
  assert.ok(Date.now() - started >= 900);
});

test('malformed requests get a framed JSON error and a close, not a hang', async (t) => {
  const { port } = await startService(t);
  const cases = [
    ['garbage request line', 'NOT HTTP AT ALL\r\n\r\n', 400, '{"error":"bad request"}'],
    ['oversized headers', `GET / HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`, 431, '{"error":"request header fields too large"}'],
  ];
  for (const [name, text, status, body] of cases) {
    const conn = await raw.connect(port);
    try {
      const res = await conn.send(text);
      assert.equal(res.status, status, name);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.body, body);
      assert.equal(await conn.closedWithin(2000), true);
    } finally {
      conn.destroy();
    }
  }
});

test('malformed percent-encoding in a route answers 400 JSON', async (t) => {
  const { port } = await startService(t);
  const res = await request(port, 'GET', '/ratings/%zz');
  assert.equal(res.status, 400);
  assert.equal(res.body, '{"error":"bad request"}');
});

test('HTTP_NODELAY and HTTP_KEEPALIVE_TIMEOUT_SECONDS set the node:http server options', () => {
  const app = () => {};
  const base = { keepAliveTimeoutSeconds: 60, headerTimeoutSeconds: 10, maxConnections: 1024, keepAlive: true };
  assert.equal(createHttpServer(app, { ...base, noDelay: true }).noDelay, true);
  assert.equal(createHttpServer(app, { ...base, noDelay: false }).noDelay, false);
  assert.equal(createHttpServer(app, { ...base, noDelay: false, keepAliveTimeoutSeconds: 7 }).keepAliveTimeout, 7000);
});
