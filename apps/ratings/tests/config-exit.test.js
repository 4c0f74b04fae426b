'use strict';

// A bad value must stop the real process before it listens: exit status 2
// and exactly one stderr line naming variable and value.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnServe } = require('./helpers/process');

const cases = [
  [{ HTTP_NODELAY: 'maybe' }, 'ratings: invalid HTTP_NODELAY="maybe": want true or false'],
  [{ HTTP_KEEPALIVE: '1' }, 'ratings: invalid HTTP_KEEPALIVE="1": want true or false'],
  [{ ACCESS_LOG: '' }, 'ratings: invalid ACCESS_LOG="": want true or false'],
  [{ UPSTREAM_KEEPALIVE: 'yes' }, 'ratings: invalid UPSTREAM_KEEPALIVE="yes": want true or false'],
  [{ PORT: 'http' }, 'ratings: invalid PORT="http": want an integer from 1 to 65535'],
  [{ PORT: '70000' }, 'ratings: invalid PORT="70000": want an integer from 1 to 65535'],
  [{ HTTP_KEEPALIVE_TIMEOUT_SECONDS: '0' }, 'ratings: invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS="0": want an integer from 1 to 3600'],
  [{ SHUTDOWN_TIMEOUT_SECONDS: 'ten' }, 'ratings: invalid SHUTDOWN_TIMEOUT_SECONDS="ten": want an integer from 1 to 300'],
  [{ HTTP_HEADER_TIMEOUT_SECONDS: '0' }, 'ratings: invalid HTTP_HEADER_TIMEOUT_SECONDS="0": want an integer from 1 to 300'],
  [{ HTTP_MAX_CONNECTIONS: '-5' }, 'ratings: invalid HTTP_MAX_CONNECTIONS="-5": want an integer from 1 to 100000'],
  [{ UPSTREAM_MAX_REQUESTS_PER_CONNECTION: '1000001' }, 'ratings: invalid UPSTREAM_MAX_REQUESTS_PER_CONNECTION="1000001": want an integer from 1 to 1000000'],
  [{ LOG_LEVEL: 'trace' }, 'ratings: invalid LOG_LEVEL="trace": want one of debug, info, warn, error'],
  [{ SERVICE_VERSION: 'v2' }, 'ratings: invalid SERVICE_VERSION="v2": want one of v1, v-faulty, v-delayed, v-unavailable, v-unhealthy'],
  [{ LISTEN_ADDRESS: 'bad address!' }, 'ratings: invalid LISTEN_ADDRESS="bad address!": want an IP address or host name'],
];

test('bad configuration exits 2 with one line on stderr', async (t) => {
  // The processes are independent; starting them together keeps this fast.
  // One that wrongly accepts its value would listen forever: kill it so the
  // test fails on the exit status instead of hanging.
  const runs = cases.map(([env]) => {
    const run = spawnServe({ PORT: '9', ...env });
    setTimeout(() => run.child.kill('SIGKILL'), 10000).unref();
    return run.exited;
  });
  const results = await Promise.all(runs);
  for (const [i, [env, line]] of cases.entries()) {
    await t.test(JSON.stringify(env), () => {
      assert.equal(results[i].code, 2);
      assert.equal(results[i].stderr, `${line}\n`);
      assert.equal(results[i].stdout, '');
    });
  }
});
