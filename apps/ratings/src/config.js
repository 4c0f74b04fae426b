'use strict';

// Reads the env-var catalogue of docs/configuration.md once at start. Every rule lives here so that a bad value fails
// before the server listens, with a message naming the variable and the value.

const net = require('node:net');

const SERVICE_VERSIONS = ['v1', 'v-faulty', 'v-delayed', 'v-unavailable', 'v-unhealthy'];
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

class ConfigError extends Error {
  constructor(name, value, want) {
    super(`invalid ${name}=${JSON.stringify(value)}: want ${want}`);
    this.name = 'ConfigError';
  }
}

// A reader gives the fallback when the variable is unset, else its trimmed
// value parsed, or a ConfigError saying what it wants (want(...args)).
function reader(want, parse) {
  return (env, name, fallback, ...args) => {
    const raw = env[name];
    if (raw === undefined) return fallback;
    const value = parse(raw.trim(), ...args);
    if (value === undefined) throw new ConfigError(name, raw, want(...args));
    return value;
  };
}

const BOOLEANS = new Map([['true', true], ['false', false]]);
const boolean = reader(() => 'true or false', (v) => BOOLEANS.get(v.toLowerCase()));
const integer = reader(
  (min, max) => `an integer from ${min} to ${max}`,
  (v, min, max) => (/^[0-9]+$/.test(v) && Number(v) >= min && Number(v) <= max ? Number(v) : undefined),
);
const oneOf = reader((allowed) => `one of ${allowed.join(', ')}`, (v, allowed) => (allowed.includes(v.toLowerCase()) ? v.toLowerCase() : undefined));
// Host names as well as IPs ("localhost", "::"), but nothing the resolver
// would choke on later with a less helpful message.
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const listenAddress = reader(() => 'an IP address or host name', (v) => (net.isIP(v) !== 0 || HOST_NAME.test(v) ? v : undefined));

function loadConfig(env) {
  return {
    port: integer(env, 'PORT', 9080, 1, 65535),
    listenAddress: listenAddress(env, 'LISTEN_ADDRESS', '0.0.0.0'),
    noDelay: boolean(env, 'HTTP_NODELAY', true),
    keepAlive: boolean(env, 'HTTP_KEEPALIVE', true),
    keepAliveTimeoutSeconds: integer(env, 'HTTP_KEEPALIVE_TIMEOUT_SECONDS', 60, 1, 3600),
    headerTimeoutSeconds: integer(env, 'HTTP_HEADER_TIMEOUT_SECONDS', 10, 1, 300),
    maxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 1024, 1, 100000),
    // Validated so that one manifest fits all services; ratings calls nobody.
    upstreamKeepAlive: boolean(env, 'UPSTREAM_KEEPALIVE', true),
    upstreamMaxRequestsPerConnection: integer(env, 'UPSTREAM_MAX_REQUESTS_PER_CONNECTION', 100, 1, 1000000),
    shutdownTimeoutSeconds: integer(env, 'SHUTDOWN_TIMEOUT_SECONDS', 10, 1, 300),
    accessLog: boolean(env, 'ACCESS_LOG', false),
    serverTiming: boolean(env, 'SERVER_TIMING', true),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    serviceVersion: oneOf(env, 'SERVICE_VERSION', 'v1', SERVICE_VERSIONS),
  };
}

module.exports = { loadConfig, ConfigError, SERVICE_VERSIONS, LOG_LEVELS };
