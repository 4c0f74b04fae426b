'use strict';

// The Express app: docs/contract.md's ratings routes, 405 with Allow on known paths,
// 404 for everything else, JSON errors.

const { STATUS_CODES } = require('node:http');
const express = require('express');
const { serverTiming } = require('./server-timing');

// Many times any realistic ratings object; with the store's product cap it bounds POSTs' memory.
const MAX_BODY_BYTES = 16 * 1024;

// Upstream's exact Content-Type: a Buffer and setHeader, as Express adds "; charset=utf-8" otherwise.
const JSON_TYPE = 'application/json';

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

// Digits only ("12abc" and "-1" are 400, not upstream's parseInt), and within 2^53 to echo exactly.
function parseProductId(raw) {
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return undefined;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : undefined;
}

function isJsonObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// An empty body is not valid ratings JSON; body-parser would hand it on as {}.
function rejectEmptyBody(req, res, buf) {
  if (buf.length === 0) throw new SyntaxError('empty body');
}

// connection.close, read as each response is sent: "Connection: close" (HTTP_KEEPALIVE=false,
// or a drain has begun). schedule(fn, ms) returns a cancel function (tests inject their own).
function createApp({ behaviour, store, metrics, connection, onServed = null, schedule = defaultSchedule, logger, timing = true }) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);

  // Every response leaves through here (res.send: Content-Length, HEAD).
  function send(res, status, contentType, body) {
    if (connection.close) res.setHeader('Connection', 'close');
    res.status(status).setHeader('Content-Type', contentType);
    res.send(Buffer.isBuffer(body) ? body : Buffer.from(body));
  }
  function sendJson(res, status, value) {
    send(res, status, JSON_TYPE, JSON.stringify(value));
  }

  if (timing) app.use(serverTiming());
  app.use(metrics.middleware(onServed));

  // Any Content-Type, as upstream (curl -d sends a form type).
  const parseJson = express.json({ type: () => true, limit: MAX_BODY_BYTES, verify: rejectEmptyBody });

  // A path's method handlers; other methods get 405 with Allow (HEAD runs the GET handlers).
  function route(path, handlers) {
    const r = app.route(path);
    const allow = [];
    for (const [method, handler] of Object.entries(handlers)) {
      r[method.toLowerCase()](handler);
      allow.push(method);
      if (method === 'GET') allow.push('HEAD');
    }
    const allowed = allow.sort().join(', ');
    r.all((req, res) => {
      res.setHeader('Allow', allowed);
      sendJson(res, 405, METHOD_NOT_ALLOWED);
    });
  }

  function requireProductId(req, res, next) {
    const id = parseProductId(req.params.id);
    if (id === undefined) {
      sendJson(res, 400, INVALID_ID);
      return;
    }
    res.locals.productId = id;
    next();
  }

  function sendRatings(res, id) {
    sendJson(res, 200, { id, ratings: store.get(id) });
  }

  function getRatings(req, res) {
    const id = res.locals.productId;
    const outcome = behaviour.ratingsOutcome();
    if (outcome.kind === 'unavailable') {
      sendJson(res, 503, UNAVAILABLE);
    } else if (outcome.kind === 'delayed') {
      const cancel = schedule(() => sendRatings(res, id), outcome.delayMs);
      // The client left: drop the timer instead of answering nobody.
      res.on('close', () => {
        if (!res.writableEnded) cancel();
      });
    } else {
      sendRatings(res, id);
    }
  }

  function postRatings(req, res) {
    if (!isJsonObject(req.body)) {
      sendJson(res, 400, INVALID_JSON);
      return;
    }
    const id = res.locals.productId;
    sendJson(res, 200, { id, ratings: store.put(id, req.body) });
  }

  const missingProductId = (req, res) => sendJson(res, 400, INVALID_ID);
  // A bad id answers 400 whatever the body, and the body is not read for it.
  route('/ratings/:id', { GET: [requireProductId, getRatings], POST: [requireProductId, parseJson, postRatings] });
  route('/ratings', { GET: missingProductId, POST: missingProductId });
  route('/health', {
    GET: (req, res) => {
      if (behaviour.healthy()) sendJson(res, 200, HEALTHY);
      else sendJson(res, 500, UNHEALTHY);
    },
  });
  route('/metrics', {
    GET: async (req, res) => {
      send(res, 200, metrics.registry.contentType, await metrics.exposition());
    },
  });

  app.use((req, res) => sendJson(res, 404, NOT_FOUND));

  // Body-parser errors (by `type`), the router's bad percent-encoding 400, and bugs: JSON, not HTML.
  app.use((err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err.type === 'entity.too.large') {
      sendJson(res, 413, BODY_TOO_LARGE);
    } else if (err.type === 'entity.parse.failed' || err.type === 'entity.verify.failed') {
      sendJson(res, 400, INVALID_JSON);
    } else {
      const status = err.status >= 400 && err.status < 500 ? err.status : 500;
      if (status === 500) logger.error(`${req.method} ${req.path}: ${err.stack || err}`);
      sendJson(res, status, { error: STATUS_CODES[status].toLowerCase() });
    }
  });

  return app;
}

module.exports = { createApp, parseProductId, MAX_BODY_BYTES, JSON_TYPE };
