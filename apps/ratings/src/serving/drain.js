'use strict';

// The drain on SIGTERM/SIGINT: stop accepting, close idle connections, let
// the requests in flight finish (their responses say "Connection: close"),
// and cut what is left after SHUTDOWN_TIMEOUT_SECONDS.

// connection: the flag the app reads for each response (createApp).
// Resolves with the exit status: 0 when every connection finished in time,
// 1 when the rest had to be cut.
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
