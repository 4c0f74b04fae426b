'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const { RatingsStore } = require('../src/ratings-store');
const { MAX_BODY_BYTES } = require('../src/app');

const DEFAULT_0 = '{"id":0,"ratings":{"Reviewer1":5,"Reviewer2":4}}';
const INVALID_ID = '{"error":"please provide numeric product ID"}';
const INVALID_JSON = '{"error":"please provide valid ratings JSON"}';

test('GET /ratings/<id> answers the default ratings byte for byte', async (t) => {
  const { port } = await startService(t);
  const res = await request(port, 'GET', '/ratings/0');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.body, DEFAULT_0);
  assert.equal((await request(port, 'GET', '/ratings/42?x=1')).body, '{"id":42,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
  assert.equal((await request(port, 'GET', '/ratings/007')).body, '{"id":7,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
});

test('GET /health answers that ratings is healthy', async (t) => {
  const { port } = await startService(t);
  const res = await request(port, 'GET', '/health');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.body, '{"status":"Ratings is healthy"}');
});

test('non-numeric or missing ids answer 400 with capital "ID"', async (t) => {
  const { port } = await startService(t);
  const paths = ['/ratings', '/ratings/', '/ratings/abc', '/ratings/12abc', '/ratings/-1', '/ratings/1.5', '/ratings/%20', '/ratings/99999999999999999999'];
  for (const method of ['GET', 'POST']) {
    for (const path of paths) {
      await t.test(`${method} ${path}`, async () => {
        const res = await request(port, method, path, { body: method === 'POST' ? '{"a":1}' : undefined });
        assert.equal(res.status, 400);
        assert.equal(res.headers['content-type'], 'application/json');
        assert.equal(res.body, INVALID_ID);
      });
    }
  }
});

test('POST stores ratings for that id; later GETs return them', async (t) => {
  const { port } = await startService(t);
  const posted = await request(port, 'POST', '/ratings/7', {
    headers: { 'Content-Type': 'application/json' },
    body: '{"Reviewer1":1,"Reviewer2":2}',
  });
  assert.equal(posted.status, 200);
  assert.equal(posted.headers['content-type'], 'application/json');
  assert.equal(posted.body, '{"id":7,"ratings":{"Reviewer1":1,"Reviewer2":2}}');
  assert.equal((await request(port, 'GET', '/ratings/7')).body, '{"id":7,"ratings":{"Reviewer1":1,"Reviewer2":2}}');
  assert.equal((await request(port, 'GET', '/ratings/0')).body, DEFAULT_0, 'other ids keep the default');
});

test('POST parses the body whatever its Content-Type, as curl -d sends a form type', async (t) => {
  const { port } = await startService(t);
  for (const type of ['application/x-www-form-urlencoded', 'text/plain', undefined]) {
    const headers = type === undefined ? {} : { 'Content-Type': type };
    const res = await request(port, 'POST', '/ratings/3', { headers, body: '{"r":3}' });
    assert.equal(res.status, 200, `Content-Type ${type}`);
    assert.equal(res.body, '{"id":3,"ratings":{"r":3}}');
  }
});

test('POST bodies that are not a JSON object answer 400 and store nothing', async (t) => {
  const { port } = await startService(t);
  const bodies = ['{"a":', 'not json', '', '   ', '[1,2]', '5', '"text"', 'null', 'true'];
  for (const body of bodies) {
    await t.test(JSON.stringify(body), async () => {
      const res = await request(port, 'POST', '/ratings/5', { headers: { 'Content-Type': 'application/json' }, body });
      assert.equal(res.status, 400);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.body, INVALID_JSON);
    });
  }
  await t.test('no body at all', async () => {
    const res = await request(port, 'POST', '/ratings/5');
    assert.equal(res.status, 400);
    assert.equal(res.body, INVALID_JSON);
  });
  assert.equal((await request(port, 'GET', '/ratings/5')).body, '{"id":5,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
});

test('POST with a body over the limit answers 413 JSON and the service keeps serving', async (t) => {
  const { port } = await startService(t);
  const big = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) });
  const res = await request(port, 'POST', '/ratings/1', { body: big });
  assert.equal(res.status, 413);
  assert.equal(res.body, '{"error":"payload too large"}');
  // Without Content-Length the limit must still hold (chunked upload).
  const chunked = await request(port, 'POST', '/ratings/1', { headers: { 'Transfer-Encoding': 'chunked' }, body: big });
  assert.equal(chunked.status, 413);
  assert.equal((await request(port, 'GET', '/ratings/1')).status, 200);
});

test('a POST just under the limit is accepted', async (t) => {
  const { port } = await startService(t);
  const body = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES - 20) });
  assert.ok(Buffer.byteLength(body) <= MAX_BODY_BYTES);
  const res = await request(port, 'POST', '/ratings/1', { body });
  assert.equal(res.status, 200);
});

test('each service instance has its own store', async (t) => {
  const first = await startService(t);
  const second = await startService(t);
  await request(first.port, 'POST', '/ratings/9', { body: '{"x":1}' });
  assert.equal((await request(second.port, 'GET', '/ratings/9')).body, '{"id":9,"ratings":{"Reviewer1":5,"Reviewer2":4}}');
});

test('the store forgets the oldest posted product past its cap', () => {
  const store = new RatingsStore(2);
  store.put(1, { a: 1 });
  store.put(2, { b: 2 });
  store.put(1, { a: 11 }); // re-posting makes 1 the newest
  store.put(3, { c: 3 });
  assert.deepEqual(store.get(1), { a: 11 });
  assert.deepEqual(store.get(2), { Reviewer1: 5, Reviewer2: 4 });
  assert.deepEqual(store.get(3), { c: 3 });
});
