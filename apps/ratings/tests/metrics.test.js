'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const { HttpMetrics } = require('../src/metrics');

const LE = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

test('the registry renders Prometheus text with cumulative buckets', () => {
  const metrics = new HttpMetrics();
  metrics.observe('GET', '/ratings/:id', 200, 0.0005); // le is inclusive
  metrics.observe('GET', '/ratings/:id', 200, 0.003);
  metrics.observe('GET', '/ratings/:id', 200, 11);
  metrics.observe('GET', 'unmatched', 404, 0.0001);
  const lines = metrics.render().split('\n');
  const series = 'method="GET",route="/ratings/:id",status="200"';
  assert.ok(lines.includes('# TYPE http_requests_total counter'));
  assert.ok(lines.includes('# TYPE http_request_duration_seconds histogram'));
  assert.ok(lines.includes(`http_requests_total{${series}} 3`));
  assert.ok(lines.includes('http_requests_total{method="GET",route="unmatched",status="404"} 1'));
  const want = [1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3];
  const buckets = lines.filter((l) => l.startsWith(`http_request_duration_seconds_bucket{${series},`));
  assert.deepEqual(buckets, LE.map((le, i) => `http_request_duration_seconds_bucket{${series},le="${le}"} ${want[i]}`));
  assert.ok(lines.includes(`http_request_duration_seconds_count{${series}} 3`));
  assert.ok(lines.includes(`http_request_duration_seconds_sum{${series}} ${0.0005 + 0.003 + 11}`));
  assert.equal(lines.at(-1), '', 'text ends with a newline');
});

test('label values are escaped', () => {
  const metrics = new HttpMetrics();
  metrics.observe('GET', 'a"b\\c\nd', 200, 0.1);
  assert.ok(metrics.render().includes('route="a\\"b\\\\c\\nd"'));
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
  const res = await request(port, 'GET', '/metrics');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const lines = res.body.split('\n');
  for (const line of [
    'http_requests_total{method="GET",route="/ratings/:id",status="200"} 2',
    'http_requests_total{method="GET",route="/ratings/:id",status="400"} 1',
    'http_requests_total{method="POST",route="/ratings/:id",status="200"} 1',
    'http_requests_total{method="HEAD",route="/health",status="200"} 1',
    'http_requests_total{method="DELETE",route="/health",status="405"} 1',
    'http_requests_total{method="GET",route="unmatched",status="404"} 2',
    'http_request_duration_seconds_count{method="GET",route="/ratings/:id",status="200"} 2',
    'http_request_duration_seconds_bucket{method="GET",route="/ratings/:id",status="200",le="+Inf"} 2',
  ]) {
    assert.ok(lines.includes(line), `missing ${line}`);
  }
  assert.ok(!res.body.includes('/random/path'), 'unmatched paths do not become labels');
  const les = lines
    .filter((l) => l.startsWith('http_request_duration_seconds_bucket{method="GET",route="/ratings/:id",status="200",'))
    .map((l) => l.match(/le="([^"]+)"/)[1]);
  assert.deepEqual(les, LE);
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
  const want = 'http_requests_total{method="GET",route="/ratings/:id",status="499"} 1';
  let body = '';
  for (let i = 0; i < 100 && !body.includes(want); i++) {
    body = (await request(port, 'GET', '/metrics')).body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(body.includes(want), body);
});
