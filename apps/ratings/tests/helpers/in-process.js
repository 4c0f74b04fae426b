'use strict';

// Runs the real service (config defaults, app, server) inside the test
// process on an ephemeral loopback port, with injectable clock, randomness
// and timers. Output streams are captured.

const { loadConfig } = require('../../src/config');
const { createService } = require('../../src/service');

function captureStream() {
  const stream = { text: '', write: (chunk) => { stream.text += chunk; return true; } };
  return stream;
}

async function startService(t, { env = {}, ...deps } = {}) {
  const config = { ...loadConfig(env), port: 0, listenAddress: '127.0.0.1' };
  const stdout = captureStream();
  const stderr = captureStream();
  const service = createService(config, { stdout, stderr, ...deps });
  const port = await service.listen();
  t.after(async () => {
    service.server.closeAllConnections();
    await service.shutdown('test end');
  });
  return { ...service, port, stdout, stderr };
}

module.exports = { startService };
