'use strict';

// The drain on SIGTERM/SIGINT (DESIGN.md, "How each knob is implemented", SHUTDOWN_TIMEOUT_SECONDS); connection: the
// flag the app reads for each response. Resolves with the exit status: 0, or 1 when the rest was cut.
function drain(server, connection, timeoutSeconds, logger) {
  connection.close = true;
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      logger.warn('shutdown timeout reached; closing remaining connections');
      server.closeAllConnections();
      resolve(1);
    }, timeoutSeconds * 1000);
    server.close(() => {
      clearTimeout(deadline);
      logger.info('drained');
      resolve(0);
    });
    server.closeIdleConnections();
  });
}

module.exports = { drain };
