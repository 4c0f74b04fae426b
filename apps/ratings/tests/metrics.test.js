'use strict';

// GET /metrics: the two catalogue families of docs/configuration.md, read
// back through a small parser of the text format, so that the label order
// (prom-client puts `le` first) does not matter.

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { startService } = require('./helpers/in-process');
const { createMetrics, MAX_RENDER_AGE_MS } = require('../src/metrics');
const { request } = require('./helpers/http-client');

const LE = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

const HELP_REQUESTS = '# HELP http_requests_total HTTP requests served, by method, route pattern and status.';
const HELP_DURATION = '# HELP http_request_duration_seconds Time to serve an HTTP request, by method, route pattern and status.';

// Samples of the exposition text: [{ name, labels: {..}, value }].
function parse(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
    assert.ok(m, `unparsable sample line ${JSON.stringify(line)}`);
    const labels = {};
    for (const [, name, value] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

// The value of the sample with exactly these labels, or undefined.
function value(samples, name, labels) {
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  return found?.value;
}

async function scrape(port) {
  const res = await request(port, 'GET', '/metrics');
  assert.equal(res.status, 200);
  return res;
}

test('the two catalogue families: HELP and TYPE exactly, labels method, route, status', async (t) => {
  const { port } = await startService(t);
  await request(port, 'GET', '/ratings/0');
  const { body } = await scrape(port);
  const lines = body.split('\n');
  assert.ok(lines.includes(HELP_REQUESTS));
  assert.ok(lines.includes('# TYPE http_requests_total counter'));
  assert.ok(lines.includes(HELP_DURATION));
  assert.ok(lines.includes('# TYPE http_request_duration_seconds histogram'));
  for (const s of parse(body).filter((x) => x.name.startsWith('http_'))) {
    const want = s.name === 'http_request_duration_seconds_bucket' ? ['le', 'method', 'route', 'status'] : ['method', 'route', 'status'];
    assert.deepEqual(Object.keys(s.labels).sort(), want, s.name);
  }
  assert.equal(lines.at(-1), '', 'text ends with a newline');
});

test('buckets are exactly the catalogue ones, cumulative', async (t) => {
  const { port } = await startService(t);
  await request(port, 'GET', '/ratings/0');
  const samples = parse((await scrape(port)).body);
  const series = { method: 'GET', route: '/ratings/:id', status: '200' };
  const buckets = samples.filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/ratings/:id');
  assert.deepEqual(buckets.map((s) => s.labels.le), LE);
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value, `bucket ${LE[i]}`);
  assert.equal(buckets.at(-1).value, 1);
  assert.equal(value(samples, 'http_request_duration_seconds_count', series), 1);
  assert.ok(value(samples, 'http_request_duration_seconds_sum', series) > 0);
});

test('GET /metrics reports requests by method, route pattern and status', async (t) => {
  const { port } = await startService(t);
  await request(port, 'GET', '/ratings/1');
  await request(port, 'GET', '/ratings/2');
  await request(port, 'GET', '/ratings/abc');
  await request(port, 'POST', '/ratings/3', { body: '{}' });
  await request(port, 'HEAD', '/health');
  await request(port, 'DELETE', '/health');
  await request(port, 'GET', '/random/path/1');
  await request(port, 'GET', '/random/path/2');
  const res = await scrape(port);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const samples = parse(res.body);
  const total = (method, route, status) => value(samples, 'http_requests_total', { method, route, status });
  assert.equal(total('GET', '/ratings/:id', '200'), 2);
  assert.equal(total('GET', '/ratings/:id', '400'), 1);
  assert.equal(total('POST', '/ratings/:id', '200'), 1);
  assert.equal(total('HEAD', '/health', '200'), 1);
  assert.equal(total('DELETE', '/health', '405'), 1);
  assert.equal(total('GET', 'unmatched', '404'), 2);
  const series = { method: 'GET', route: '/ratings/:id', status: '200' };
  assert.equal(value(samples, 'http_request_duration_seconds_count', series), 2);
  assert.equal(value(samples, 'http_request_duration_seconds_bucket', { ...series, le: '+Inf' }), 2);
  assert.ok(!res.body.includes('/random/path'), 'unmatched paths do not become labels');
});

test('methods outside the standard set are counted as OTHER', async (t) => {
  const { port } = await startService(t);
  assert.equal((await request(port, 'PROPFIND', '/health')).status, 405);
  assert.equal((await request(port, 'PURGE', '/nope')).status, 404);
  const { body } = await scrape(port);
  const samples = parse(body);
  assert.equal(value(samples, 'http_requests_total', { method: 'OTHER', route: '/health', status: '405' }), 1);
  assert.equal(value(samples, 'http_requests_total', { method: 'OTHER', route: 'unmatched', status: '404' }), 1);
  assert.ok(!body.includes('PROPFIND') && !body.includes('PURGE'));
});

test('a request the client abandons is counted as 499, not as a success', async (t) => {
  let scheduled = false;
  const { port } = await startService(t, {
    env: { SERVICE_VERSION: 'v-delayed' },
    random: () => 0,
    schedule: () => { scheduled = true; return () => {}; },
  });
  const req = http.get({ host: '127.0.0.1', port, path: '/ratings/1', agent: false });
  req.on('error', () => {});
  while (!scheduled) await new Promise((resolve) => setImmediate(resolve));
  req.destroy();
  const labels = { method: 'GET', route: '/ratings/:id', status: '499' };
  let count;
  // Past a cached render too (MAX_RENDER_AGE_MS).
  for (let i = 0; i < 300 && count !== 1; i++) {
    count = value(parse((await scrape(port)).body), 'http_requests_total', labels);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(count, 1);
});

test('scrapes within MAX_RENDER_AGE_MS share one render; a later one renders anew', async (t) => {
  const { port } = await startService(t);
  const first = (await scrape(port)).body;
  await request(port, 'GET', '/health');
  assert.equal((await scrape(port)).body, first, 'a scrape within the max age rendered anew');
  await new Promise((resolve) => setTimeout(resolve, MAX_RENDER_AGE_MS + 50));
  const samples = parse((await scrape(port)).body);
  assert.equal(value(samples, 'http_requests_total', { method: 'GET', route: '/health', status: '200' }), 1);
});

test('one render at a time: scrapes meanwhile get its Buffer, not a copy', async () => {
  const metrics = createMetrics();
  let renders = 0;
  const render = metrics.registry.metrics.bind(metrics.registry);
  metrics.registry.metrics = () => { renders += 1; return render(); };
  const bodies = await Promise.all(Array.from({ length: 8 }, () => metrics.exposition()));
  assert.equal(renders, 1);
  assert.ok(Buffer.isBuffer(bodies[0]));
  for (const b of bodies) assert.equal(b, bodies[0]);
  assert.equal(await metrics.exposition(), bodies[0]);
  assert.equal(renders, 1);
});
