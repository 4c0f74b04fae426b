'use strict';

// Starts the service as a real child process through the serve script, the
// way `bookload local` and `make run` do.

const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const APP_DIR = path.resolve(__dirname, '..', '..');
const SERVE = path.join(APP_DIR, 'serve');

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Spawns serve from a directory other than the app's and collects output.
function spawnServe(env, { cwd = '/' } = {}) {
  const child = spawn(SERVE, [], { cwd, env: { PATH: process.env.PATH, BOOKINFO_NODE: process.execPath, LISTEN_ADDRESS: '127.0.0.1', ...env } });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { out.stdout += d; });
  child.stderr.on('data', (d) => { out.stderr += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, ...out })));
  return { child, out, exited };
}

// Resolves once the service logs that it listens. A port taken between the
// probe and the listen (other suites run on this machine too) is retried.
async function startServe(t, env = {}) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const running = spawnServe({ PORT: String(port), ...env });
    const outcome = await new Promise((resolve) => {
      const onData = () => {
        if (running.out.stderr.includes(' listening on ')) resolve('listening');
      };
      running.child.stderr.on('data', onData);
      running.exited.then(() => resolve('exited'));
    });
    if (outcome === 'listening') {
      t.after(() => running.child.kill('SIGKILL'));
      return { ...running, port };
    }
    const { stderr } = await running.exited;
    if (!stderr.includes('EADDRINUSE')) throw new Error(`service did not start: ${stderr}`);
  }
  throw new Error('no free port after 3 attempts');
}

module.exports = { spawnServe, startServe, APP_DIR };
