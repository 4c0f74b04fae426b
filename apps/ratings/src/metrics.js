'use strict';

// The two metric families every service exports (DESIGN.md, "Metrics"), in a
// Registry per service instance, so in-process tests do not share counts.

const client = require('prom-client');

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABELS = ['method', 'route', 'status'];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT']);

const CLIENT_CLOSED = 499; // the client left before the answer (nginx's)

// A scrape answers with a render at most this old (DESIGN.md, "A crowd of scrapes").
const MAX_RENDER_AGE_MS = 1000;

function createMetrics() {
  const registry = new client.Registry();
  const requests = new client.Counter({ name: 'http_requests_total', help: 'HTTP requests served, by method, route pattern and status.',
    labelNames: LABELS, registers: [registry] });
  const duration = new client.Histogram({ name: 'http_request_duration_seconds', help: 'Time to serve an HTTP request, by method, route pattern and status.',
    labelNames: LABELS, buckets: BUCKETS, registers: [registry] });

  // Express middleware, mounted first; DESIGN.md, "Metrics", says what it records.
  function middleware(onServed) {
    return (req, res, next) => {
      const stopTimer = duration.startTimer();
      res.on('close', () => {
        const labels = {
          method: METHODS.has(req.method) ? req.method : 'OTHER',
          route: req.route === undefined ? 'unmatched' : req.route.path,
          status: res.writableFinished ? res.statusCode : CLIENT_CLOSED,
        };
        const seconds = stopTimer(labels);
        requests.inc(labels);
        if (onServed !== null) onServed(req, labels.status, seconds);
      });
      next();
    };
  }

  // The exposition as one Buffer that every answer within MAX_RENDER_AGE_MS shares (a client
  // that does not read holds a reference, not a copy); one render at a time, later scrapes
  // meanwhile get its result.
  let rendered = { at: -Infinity, body: null };
  let rendering = null;
  function exposition() {
    if (performance.now() - rendered.at < MAX_RENDER_AGE_MS) return Promise.resolve(rendered.body);
    if (rendering === null) {
      const at = performance.now();
      rendering = registry.metrics()
        .then((text) => {
          rendered = { at, body: Buffer.from(text) };
          return rendered.body;
        })
        .finally(() => { rendering = null; });
    }
    return rendering;
  }

  return { registry, middleware, exposition };
}

module.exports = { createMetrics, BUCKETS, CLIENT_CLOSED, MAX_RENDER_AGE_MS };
