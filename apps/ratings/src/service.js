'use strict';

// Wires configuration, behaviour, app and server together. Clock,
// randomness, timers and streams are parameters for in-process tests.

const { createApp } = require('./app');
const { createBehaviour } = require('./behaviour');
const { createHttpServer } = require('./serving/http-server');
const { drain } = require('./serving/drain');
const { createLogger } = require('./logger');
const { createMetrics } = require('./metrics');
const { RatingsStore } = require('./ratings-store');

const SERVICE = 'ratings';

// One line per request; the path without its query string.
function createAccessLog(stream) {
  return (req, status, seconds) => {
    stream.write(`${new Date().toISOString()} ${SERVICE} ${req.method} ${req.path} ${status} ${(seconds * 1000).toFixed(3)}\n`);
  };
}

// Not listening yet: the caller installs its signal handlers first.
function createService(config, { now, random, schedule, stdout = process.stdout, stderr = process.stderr } = {}) {
  const logger = createLogger(SERVICE, config.logLevel, stderr);
  const connection = { close: !config.keepAlive };
  const app = createApp({
    behaviour: createBehaviour(config.serviceVersion, { now, random }),
    store: new RatingsStore(),
    metrics: createMetrics(),
    connection,
    onServed: config.accessLog ? createAccessLog(stdout) : null,
    schedule,
    logger,
    timing: config.serverTiming,
  });
  const server = createHttpServer(app, config, connection);

  let drained = null;
  function shutdown(reason) {
    if (drained !== null) return drained;
    logger.info(`${reason}: draining, at most ${config.shutdownTimeoutSeconds} s`);
    drained = drain(server, connection, config.shutdownTimeoutSeconds, logger);
    return drained;
  }

  // Resolves with the bound port.
  function listen() {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.listenAddress, () => {
        server.off('error', reject);
        const { address, port } = server.address();
        logger.info(`listening on ${address}:${port} (SERVICE_VERSION=${config.serviceVersion}, HTTP_NODELAY=${config.noDelay}, ` +
          `HTTP_KEEPALIVE=${config.keepAlive}, HTTP_KEEPALIVE_TIMEOUT_SECONDS=${config.keepAliveTimeoutSeconds})`);
        logger.debug(`configuration ${JSON.stringify(config)}`);
        resolve(port);
      });
    });
  }

  return { server, listen, shutdown };
}

module.exports = { createService };
