'use strict';

// The drain on SIGTERM/SIGINT (DESIGN.md, "How each knob is implemented", SHUTDOWN_TIMEOUT_SECONDS); connection: the
// flag the app reads for each response. Resolves with the exit status: 0, or 1 when the rest was cut.

const net = require('node:net');

// A kept-alive connection may take one more answer, with a close, for this long before it is closed as idle: closed
// at once, a request its client was sending met a closed socket (DESIGN.md, "A drain that ends no connection under a
// request").
const QUIET_MS = 1000;

function drain(server, connection, timeoutSeconds, logger) {
  connection.close = true;
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      logger.warn('shutdown timeout reached; closing remaining connections');
      server.closeAllConnections();
      resolve(1);
    }, timeoutSeconds * 1000);
    const quiet = setTimeout(() => server.closeIdleConnections(), QUIET_MS);
    // net.Server's close: stops accepting only. http.Server's (Node 19+) also closes every connection without a
    // request in progress at once, one whose next request is still in the kernel included.
    net.Server.prototype.close.call(server, () => {
      clearTimeout(deadline);
      clearTimeout(quiet);
      logger.info('drained');
      resolve(0);
    });
  });
}

module.exports = { drain, QUIET_MS };
