'use strict';

// SERVICE_VERSION variants, driven by an injected clock, random source and
// timer so that every branch is taken on purpose.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const { DELAY_MS, UNAVAILABLE_PERIOD_MS, UNHEALTHY_PERIOD_MS } = require('../src/behaviour');

const OK_BODY = '{"id":1,"ratings":{"Reviewer1":5,"Reviewer2":4}}';
const UNAVAILABLE_BODY = '{"error":"Service unavailable"}';

function sequence(...values) {
  let i = 0;
  return () => values[i++ % values.length];
}

// A timer that fires only when the test says so.
function manualTimers() {
  const pending = [];
  return {
    pending,
    schedule(fn, ms) {
      const entry = { fn, ms, cancelled: false };
      pending.push(entry);
      return () => { entry.cancelled = true; };
    },
    fireAll() {
      for (const entry of pending.splice(0)) if (!entry.cancelled) entry.fn();
    },
  };
}

test('v1 always answers the ratings, whatever the random source says', async (t) => {
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v1' }, random: () => 0 });
  for (let i = 0; i < 3; i++) assert.equal((await request(port, 'GET', '/ratings/1')).body, OK_BODY);
});

test('v-faulty answers 503 when the draw is <= 0.5, else the ratings', async (t) => {
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-faulty' }, random: sequence(0.2, 0.5, 0.51, 0.99) });
  const got = [];
  for (let i = 0; i < 4; i++) got.push(await request(port, 'GET', '/ratings/1'));
  assert.deepEqual(got.map((r) => r.status), [503, 503, 200, 200]);
  assert.equal(got[0].body, UNAVAILABLE_BODY);
  assert.equal(got[0].headers['content-type'], 'application/json');
  assert.equal(got[2].body, OK_BODY);
  assert.equal((await request(port, 'GET', '/health')).status, 200, 'health is not affected');
});

test('v-delayed holds half the answers for 7 s, the other half answer at once', async (t) => {
  const timers = manualTimers();
  const { port } = await startService(t, {
    env: { SERVICE_VERSION: 'v-delayed' },
    random: sequence(0.3, 0.9),
    schedule: timers.schedule,
  });
  let delayedDone = false;
  const delayed = request(port, 'GET', '/ratings/1').then((res) => { delayedDone = true; return res; });
  const immediate = await request(port, 'GET', '/ratings/1');
  assert.equal(immediate.status, 200);
  assert.equal(immediate.body, OK_BODY);
  assert.equal(delayedDone, false, 'the delayed answer must wait for its timer');
  assert.deepEqual(timers.pending.map((e) => e.ms), [DELAY_MS]);
  assert.equal(DELAY_MS, 7000);
  timers.fireAll();
  const res = await delayed;
  assert.equal(res.status, 200);
  assert.equal(res.body, OK_BODY);
});

test('v-delayed drops the pending answer when the client goes away', async (t) => {
  const timers = manualTimers();
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-delayed' }, random: () => 0, schedule: timers.schedule });
  const req = http.get({ host: '127.0.0.1', port, path: '/ratings/1', agent: false });
  req.on('error', () => {});
  while (timers.pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
  req.destroy();
  while (!timers.pending[0].cancelled) await new Promise((resolve) => setTimeout(resolve, 5));
});

test('v-unavailable alternates OK and 503 every 60 s, starting OK', async (t) => {
  let clock = 1_000_000;
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-unavailable' }, now: () => clock });
  const statusAt = async (offsetMs) => {
    clock = 1_000_000 + offsetMs;
    return (await request(port, 'GET', '/ratings/1')).status;
  };
  assert.equal(await statusAt(0), 200);
  assert.equal(await statusAt(UNAVAILABLE_PERIOD_MS - 1), 200);
  assert.equal(await statusAt(UNAVAILABLE_PERIOD_MS), 503);
  assert.equal(await statusAt(2 * UNAVAILABLE_PERIOD_MS - 1), 503);
  assert.equal(await statusAt(2 * UNAVAILABLE_PERIOD_MS), 200);
  assert.equal(await statusAt(3 * UNAVAILABLE_PERIOD_MS + 5), 503);
  assert.equal(UNAVAILABLE_PERIOD_MS, 60_000);
  const res = await request(port, 'GET', '/ratings/1');
  assert.equal(res.body, UNAVAILABLE_BODY);
  assert.equal((await request(port, 'GET', '/health')).status, 200, 'health stays 200');
});

test('v-unhealthy alternates every 15 min: unhealthy means /health 500 and ratings 503', async (t) => {
  let clock = 5_000;
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-unhealthy' }, now: () => clock });
  assert.equal(UNHEALTHY_PERIOD_MS, 15 * 60 * 1000);

  let health = await request(port, 'GET', '/health');
  assert.equal(health.status, 200);
  assert.equal(health.body, '{"status":"Ratings is healthy"}');
  assert.equal((await request(port, 'GET', '/ratings/1')).body, OK_BODY);

  clock = 5_000 + UNHEALTHY_PERIOD_MS;
  health = await request(port, 'GET', '/health');
  assert.equal(health.status, 500);
  assert.equal(health.headers['content-type'], 'application/json');
  assert.equal(health.body, '{"status":"Ratings is not healthy"}');
  const ratings = await request(port, 'GET', '/ratings/1');
  assert.equal(ratings.status, 503);
  assert.equal(ratings.body, UNAVAILABLE_BODY);

  clock = 5_000 + 2 * UNHEALTHY_PERIOD_MS;
  assert.equal((await request(port, 'GET', '/health')).status, 200);
  assert.equal((await request(port, 'GET', '/ratings/1')).status, 200);
});

test('POST is not subject to the fault variants, as upstream', async (t) => {
  const { port } = await startService(t, { env: { SERVICE_VERSION: 'v-faulty' }, random: () => 0 });
  const res = await request(port, 'POST', '/ratings/2', { body: '{"a":1}' });
  assert.equal(res.status, 200);
  assert.equal(res.body, '{"id":2,"ratings":{"a":1}}');
});
