'use strict';

// Reads the env-var catalogue of docs/configuration.md once at start. Every
// rule lives here so that a bad value fails before the server listens, with a
// message naming the variable and the value.

const net = require('node:net');

const SERVICE_VERSIONS = ['v1', 'v-faulty', 'v-delayed', 'v-unavailable', 'v-unhealthy'];
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

class ConfigError extends Error {
  constructor(name, value, want) {
    super(`invalid ${name}=${JSON.stringify(value)}: want ${want}`);
    this.name = 'ConfigError';
  }
}

function boolean(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(name, raw, 'true or false');
}

function integer(env, name, fallback, min, max) {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim();
  const number = Number(value);
  if (!/^[0-9]+$/.test(value) || number < min || number > max) {
    throw new ConfigError(name, raw, `an integer from ${min} to ${max}`);
  }
  return number;
}

function oneOf(env, name, fallback, allowed) {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim().toLowerCase();
  if (!allowed.includes(value)) {
    throw new ConfigError(name, raw, `one of ${allowed.join(', ')}`);
  }
  return value;
}

// Host names are allowed as well as IPs ("localhost", "::"), but not
// anything the resolver would choke on later with a less helpful message.
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function listenAddress(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim();
  if (net.isIP(value) === 0 && !HOST_NAME.test(value)) {
    throw new ConfigError(name, raw, 'an IP address or host name');
  }
  return value;
}

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
