'use strict';

// The Express application: routes of the contract, 404/405 for everything
// else, and the per-request metrics/access-log hook.

const { STATUS_CODES } = require('node:http');
const express = require('express');
const { CONTENT_TYPE: METRICS_CONTENT_TYPE } = require('./metrics');
const { createResponder } = require('./respond');
const { RECEIVED_AT } = require('./http-server');

// 16 KiB holds any realistic ratings object many times over; together with
// the store's product cap it bounds what POSTs can make the process hold.
const MAX_BODY_BYTES = 16 * 1024;

const INVALID_ID = { error: 'please provide numeric product ID' };
const INVALID_JSON = { error: 'please provide valid ratings JSON' };
const BODY_TOO_LARGE = { error: 'payload too large' };
const UNAVAILABLE = { error: 'Service unavailable' };
const HEALTHY = { status: 'Ratings is healthy' };
const UNHEALTHY = { status: 'Ratings is not healthy' };
const NOT_FOUND = { error: 'not found' };
const METHOD_NOT_ALLOWED = { error: 'method not allowed' };

function defaultSchedule(fn, ms) {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
}

// Digits only: upstream's parseInt would read "12abc" as 12 and "-1" as -1;
// ours answers 400 for both. Ids beyond 2^53 could not be echoed exactly.
function parseProductId(raw) {
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return undefined;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : undefined;
}

function isJsonObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function createApp({ behaviour, store, metrics, connection, accessLog = null, schedule = defaultSchedule, logger }) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);

  function observe(res, status) {
    const req = res.req;
    const seconds = (performance.now() - req[RECEIVED_AT]) / 1000;
    // Only matched route patterns become labels: random paths cannot blow
    // up the series count.
    const route = req.route === undefined ? 'unmatched' : req.route.path;
    metrics.observe(req.method, route, status, seconds);
    if (accessLog !== null) accessLog(req.method, req.path, status, seconds);
  }
  const respond = createResponder(connection, observe);

  function route(path, handlers) {
    const r = app.route(path);
    const allow = [];
    for (const [method, chain] of Object.entries(handlers)) {
      r[method.toLowerCase()](chain);
      allow.push(method);
      if (method === 'GET') allow.push('HEAD');
    }
    const allowHeader = { Allow: allow.sort().join(', ') };
    r.all((req, res) => respond.json(res, 405, METHOD_NOT_ALLOWED, allowHeader));
  }

  // POST validates the id before it reads the body, so a bad id answers 400
  // whatever the body.
  function requireProductId(req, res, next) {
    const id = parseProductId(req.params.id);
    if (id === undefined) {
      respond.json(res, 400, INVALID_ID);
      return;
    }
    res.locals.productId = id;
    next();
  }

  // Upstream parses the body whatever its Content-Type (curl -d sends a
  // form type), so read it as text and JSON.parse it here.
  const parseText = express.text({ type: () => true, limit: MAX_BODY_BYTES });
  function readBody(req, res, next) {
    parseText(req, res, (err) => {
      if (!err) next();
      else if (err.status === 413) respond.json(res, 413, BODY_TOO_LARGE);
      else respond.json(res, 400, INVALID_JSON);
    });
  }

  function sendRatings(res, productId) {
    respond.json(res, 200, { id: productId, ratings: store.get(productId) });
  }

  // One handler rather than [requireProductId, getRatings]: the hot route
  // then costs one router step instead of two.
  function getRatings(req, res) {
    const productId = parseProductId(req.params.id);
    if (productId === undefined) {
      respond.json(res, 400, INVALID_ID);
      return;
    }
    const outcome = behaviour.ratingsOutcome();
    if (outcome.kind === 'unavailable') {
      respond.json(res, 503, UNAVAILABLE);
    } else if (outcome.kind === 'delayed') {
      const cancel = schedule(() => sendRatings(res, productId), outcome.delayMs);
      res.once('close', () => {
        if (res.writableEnded) return;
        cancel();
        respond.abandoned(res);
      });
    } else {
      sendRatings(res, productId);
    }
  }

  function postRatings(req, res) {
    let ratings;
    try {
      ratings = JSON.parse(req.body ?? '');
    } catch {
      respond.json(res, 400, INVALID_JSON);
      return;
    }
    if (!isJsonObject(ratings)) {
      respond.json(res, 400, INVALID_JSON);
      return;
    }
    const productId = res.locals.productId;
    respond.json(res, 200, { id: productId, ratings: store.put(productId, ratings) });
  }

  const missingProductId = (req, res) => respond.json(res, 400, INVALID_ID);

  // The router tries routes in order and the patterns do not overlap, so the
  // one every page hits goes first.
  route('/ratings/:id', {
    GET: getRatings,
    POST: [requireProductId, readBody, postRatings],
  });
  route('/ratings', { GET: missingProductId, POST: missingProductId });
  route('/health', {
    GET: (req, res) => {
      if (behaviour.healthy()) respond.json(res, 200, HEALTHY);
      else respond.json(res, 500, UNHEALTHY);
    },
  });
  route('/metrics', {
    GET: (req, res) => respond.send(res, 200, METRICS_CONTENT_TYPE, metrics.render()),
  });

  app.use((req, res) => respond.json(res, 404, NOT_FOUND));

  // Reached for malformed URLs (bad percent-encoding) and for bugs; either
  // way the client gets a framed JSON answer instead of Express's HTML page.
  app.use((err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const status = err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) logger.error(`${req.method} ${req.path}: ${err.stack || err}`);
    respond.json(res, status, { error: STATUS_CODES[status].toLowerCase() });
  });

  return app;
}

module.exports = { createApp, parseProductId, MAX_BODY_BYTES };
