'use strict';

// Leveled logging to stderr (stdout is reserved for the access log).

const SEVERITY = { debug: 0, info: 1, warn: 2, error: 3 };

function createLogger(service, level, stream = process.stderr) {
  const threshold = SEVERITY[level];
  const logger = {};
  for (const [name, severity] of Object.entries(SEVERITY)) {
    logger[name] = severity < threshold
      ? () => {}
      : (message) => stream.write(`${new Date().toISOString()} ${service} ${name} ${message}\n`);
  }
  return logger;
}

module.exports = { createLogger };
