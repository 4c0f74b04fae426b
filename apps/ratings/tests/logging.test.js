'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startService } = require('./helpers/in-process');
const { request } = require('./helpers/http-client');
const { createLogger } = require('../src/logger');

const RFC3339 = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)';

test('ACCESS_LOG=true writes one line per request on stdout', async (t) => {
  const { port, stdout } = await startService(t, { env: { ACCESS_LOG: 'true' } });
  await request(port, 'GET', '/ratings/4?secret=1');
  await request(port, 'DELETE', '/health');
  const lines = stdout.text.trimEnd().split('\n');
  assert.equal(lines.length, 2, stdout.text);
  assert.match(lines[0], new RegExp(`^${RFC3339} ratings GET /ratings/4 200 \\d+\\.\\d{3}$`));
  assert.match(lines[1], new RegExp(`^${RFC3339} ratings DELETE /health 405 \\d+\\.\\d{3}$`));
});

test('ACCESS_LOG defaults to off: nothing on stdout', async (t) => {
  const { port, stdout } = await startService(t);
  await request(port, 'GET', '/ratings/4');
  assert.equal(stdout.text, '');
});

test('the start-up line goes to stderr at info level', async (t) => {
  const { stderr } = await startService(t, { env: { SERVICE_VERSION: 'v-faulty' } });
  assert.match(stderr.text, new RegExp(`^${RFC3339} ratings info listening on 127\\.0\\.0\\.1:\\d+ \\(SERVICE_VERSION=v-faulty,`));
});

test('LOG_LEVEL drops messages below the level', () => {
  const written = [];
  const stream = { write: (line) => written.push(line) };
  const logger = createLogger('ratings', 'warn', stream);
  logger.debug('d');
  logger.info('i');
  logger.warn('w');
  logger.error('e');
  assert.equal(written.length, 2);
  assert.match(written[0], new RegExp(`^${RFC3339} ratings warn w\\n$`));
  assert.match(written[1], / ratings error e\n$/);
});
