'use strict';

// How many TCP segments one response takes, read from the kernel's TCP_INFO
// of the client socket (`data_segs_in`, as `ss -ti` reports it). On
// loopback a small response sent with one write is one segment; a head and
// body written separately would be two. Node cannot call getsockopt itself,
// so this asks `ss` (iproute2) and is skipped where it is missing.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { startService } = require('./helpers/in-process');
const raw = require('./helpers/raw-http');

function haveSs() {
  try {
    execFileSync('ss', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const skip = haveSs() ? false : 'needs ss (iproute2) to read TCP_INFO';

// data_segs_in of the client socket `conn` (connected to `port`). Called
// synchronously after a response arrived, so the socket still exists even
// when the server has closed the connection behind the response.
function dataSegmentsIn(conn, port) {
  const filter = `( sport = :${conn.socket.localPort} and dport = :${port} )`;
  const out = execFileSync('ss', ['-tinH', 'state', 'connected', filter], { encoding: 'utf8' });
  const m = out.match(/\bdata_segs_in:(\d+)/);
  // No data received at all: the kernel leaves the field out.
  return m === null ? 0 : Number(m[1]);
}

const REQUESTS = [
  ['GET /health', raw.get('/health'), {}],
  ['GET /ratings/0', raw.get('/ratings/0'), {}],
  ['HEAD /ratings/0', 'HEAD /ratings/0 HTTP/1.1\r\nHost: t\r\n\r\n', { head: true }],
];
const ROUNDS = 5;

for (const noDelay of ['true', 'false']) {
  test(`one segment per response, keep-alive on, HTTP_NODELAY=${noDelay}`, { skip }, async (t) => {
    const { port } = await startService(t, { env: { HTTP_NODELAY: noDelay } });
    for (const [name, text, options] of REQUESTS) {
      const conn = await raw.connect(port);
      try {
        for (let i = 0; i < ROUNDS; i++) assert.equal((await conn.send(text, options)).status, 200);
        assert.equal(dataSegmentsIn(conn, port), ROUNDS, name);
      } finally {
        conn.destroy();
      }
    }
  });
}

test('one segment per response, HTTP_KEEPALIVE=false', { skip }, async (t) => {
  const { port } = await startService(t, { env: { HTTP_KEEPALIVE: 'false' } });
  for (const [name, text, options] of REQUESTS) {
    const conn = await raw.connect(port);
    try {
      const res = await conn.send(text, options);
      assert.equal(dataSegmentsIn(conn, port), 1, name);
      assert.equal(res.headers.connection, 'close');
      assert.equal(await conn.closedWithin(2000), true);
    } finally {
      conn.destroy();
    }
  }
});
