'use strict';

// Entry point: configuration errors exit 2 before anything listens; signals
// start a drain whose outcome is the exit status.

const { loadConfig, ConfigError } = require('./src/config');

let config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`ratings: ${err.message}\n`);
  process.exit(2);
}

const { createService } = require('./src/service');

const service = createService(config);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => service.shutdown(signal).then((status) => process.exit(status)));
}
service.listen().catch((err) => {
  process.stderr.write(`ratings: cannot listen on ${config.listenAddress}:${config.port}: ${err.message}\n`);
  process.exit(1);
});
