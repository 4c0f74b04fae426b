'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { loadConfig, ConfigError } = require('../src/config');

test('defaults follow the catalogue', () => {
  assert.deepEqual(loadConfig({}), {
    port: 9080,
    listenAddress: '0.0.0.0',
    noDelay: true,
    keepAlive: true,
    keepAliveTimeoutSeconds: 60,
    headerTimeoutSeconds: 10,
    maxConnections: 1024,
    upstreamKeepAlive: true,
    upstreamMaxRequestsPerConnection: 100,
    shutdownTimeoutSeconds: 10,
    accessLog: false,
    serverTiming: true,
    logLevel: 'info',
    serviceVersion: 'v1',
  });
});

test('valid values are parsed', async (t) => {
  const cases = [
    [{ HTTP_NODELAY: 'false' }, 'noDelay', false],
    [{ HTTP_NODELAY: ' TRUE ' }, 'noDelay', true],
    [{ HTTP_KEEPALIVE: 'False' }, 'keepAlive', false],
    [{ ACCESS_LOG: 'true' }, 'accessLog', true],
    [{ SERVER_TIMING: ' False ' }, 'serverTiming', false],
    [{ UPSTREAM_KEEPALIVE: 'false' }, 'upstreamKeepAlive', false],
    [{ PORT: '1' }, 'port', 1],
    [{ PORT: '65535' }, 'port', 65535],
    [{ HTTP_KEEPALIVE_TIMEOUT_SECONDS: '3600' }, 'keepAliveTimeoutSeconds', 3600],
    [{ SHUTDOWN_TIMEOUT_SECONDS: '1' }, 'shutdownTimeoutSeconds', 1],
    [{ HTTP_HEADER_TIMEOUT_SECONDS: '1' }, 'headerTimeoutSeconds', 1],
    [{ HTTP_HEADER_TIMEOUT_SECONDS: ' 300 ' }, 'headerTimeoutSeconds', 300],
    [{ HTTP_MAX_CONNECTIONS: '1' }, 'maxConnections', 1],
    [{ HTTP_MAX_CONNECTIONS: '100000' }, 'maxConnections', 100000],
    [{ UPSTREAM_MAX_REQUESTS_PER_CONNECTION: '1000000' }, 'upstreamMaxRequestsPerConnection', 1000000],
    [{ LOG_LEVEL: 'DEBUG' }, 'logLevel', 'debug'],
    [{ LISTEN_ADDRESS: '127.0.0.1' }, 'listenAddress', '127.0.0.1'],
    [{ LISTEN_ADDRESS: '::' }, 'listenAddress', '::'],
    [{ LISTEN_ADDRESS: 'localhost' }, 'listenAddress', 'localhost'],
    [{ SERVICE_VERSION: 'v-faulty' }, 'serviceVersion', 'v-faulty'],
    [{ SERVICE_VERSION: 'v-delayed' }, 'serviceVersion', 'v-delayed'],
    [{ SERVICE_VERSION: 'v-unavailable' }, 'serviceVersion', 'v-unavailable'],
    [{ SERVICE_VERSION: 'v-unhealthy' }, 'serviceVersion', 'v-unhealthy'],
  ];
  for (const [env, key, want] of cases) {
    await t.test(JSON.stringify(env), () => assert.equal(loadConfig(env)[key], want));
  }
});

test('bad values name the variable, the value and what is wanted', async (t) => {
  const cases = [
    [{ HTTP_NODELAY: 'maybe' }, 'invalid HTTP_NODELAY="maybe": want true or false'],
    [{ HTTP_NODELAY: '1' }, 'invalid HTTP_NODELAY="1": want true or false'],
    [{ HTTP_KEEPALIVE: 'yes' }, 'invalid HTTP_KEEPALIVE="yes": want true or false'],
    [{ ACCESS_LOG: '' }, 'invalid ACCESS_LOG="": want true or false'],
    [{ SERVER_TIMING: 'on' }, 'invalid SERVER_TIMING="on": want true or false'],
    [{ UPSTREAM_KEEPALIVE: 'on' }, 'invalid UPSTREAM_KEEPALIVE="on": want true or false'],
    [{ PORT: '0' }, 'invalid PORT="0": want an integer from 1 to 65535'],
    [{ PORT: '65536' }, 'invalid PORT="65536": want an integer from 1 to 65535'],
    [{ PORT: '80a' }, 'invalid PORT="80a": want an integer from 1 to 65535'],
    [{ PORT: '-1' }, 'invalid PORT="-1": want an integer from 1 to 65535'],
    [{ PORT: '' }, 'invalid PORT="": want an integer from 1 to 65535'],
    [{ HTTP_KEEPALIVE_TIMEOUT_SECONDS: '0' }, 'invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS="0": want an integer from 1 to 3600'],
    [{ HTTP_KEEPALIVE_TIMEOUT_SECONDS: '1.5' }, 'invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS="1.5": want an integer from 1 to 3600'],
    [{ SHUTDOWN_TIMEOUT_SECONDS: '301' }, 'invalid SHUTDOWN_TIMEOUT_SECONDS="301": want an integer from 1 to 300'],
    [{ HTTP_HEADER_TIMEOUT_SECONDS: '0' }, 'invalid HTTP_HEADER_TIMEOUT_SECONDS="0": want an integer from 1 to 300'],
    [{ HTTP_HEADER_TIMEOUT_SECONDS: '301' }, 'invalid HTTP_HEADER_TIMEOUT_SECONDS="301": want an integer from 1 to 300'],
    [{ HTTP_HEADER_TIMEOUT_SECONDS: '2.5' }, 'invalid HTTP_HEADER_TIMEOUT_SECONDS="2.5": want an integer from 1 to 300'],
    [{ HTTP_MAX_CONNECTIONS: '0' }, 'invalid HTTP_MAX_CONNECTIONS="0": want an integer from 1 to 100000'],
    [{ HTTP_MAX_CONNECTIONS: '100001' }, 'invalid HTTP_MAX_CONNECTIONS="100001": want an integer from 1 to 100000'],
    [{ HTTP_MAX_CONNECTIONS: 'many' }, 'invalid HTTP_MAX_CONNECTIONS="many": want an integer from 1 to 100000'],
    [{ UPSTREAM_MAX_REQUESTS_PER_CONNECTION: '0' }, 'invalid UPSTREAM_MAX_REQUESTS_PER_CONNECTION="0": want an integer from 1 to 1000000'],
    [{ LOG_LEVEL: 'verbose' }, 'invalid LOG_LEVEL="verbose": want one of debug, info, warn, error'],
    [{ SERVICE_VERSION: 'v2' }, 'invalid SERVICE_VERSION="v2": want one of v1, v-faulty, v-delayed, v-unavailable, v-unhealthy'],
    [{ LISTEN_ADDRESS: '' }, 'invalid LISTEN_ADDRESS="": want an IP address or host name'],
    [{ LISTEN_ADDRESS: 'not an address' }, 'invalid LISTEN_ADDRESS="not an address": want an IP address or host name'],
  ];
  for (const [env, message] of cases) {
    await t.test(JSON.stringify(env), () => {
      assert.throws(() => loadConfig(env), (err) => err instanceof ConfigError && err.message === message);
    });
  }
});
