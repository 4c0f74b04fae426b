// One bookload repetition in k6: an open-model load at a constant rate.
//
// constant-arrival-rate starts an iteration (one GET) at each tick of the
// rate, on whichever of the `connections` VUs is free; preAllocatedVUs =
// maxVUs = connections, so there are at most that many connections (each VU
// has its own). When every VU is still busy at a tick, k6 does not queue the
// request: it drops the iteration and counts it in `dropped_iterations`,
// which bookload reports. With keep-alive off, noConnectionReuse makes every
// request open its own connection (Go's client then sends Connection: close).
//
// The profile comes from BOOKLOAD_* variables, see lib/profile.js. bookload
// runs this with `k6 run --out json=FILE` and reads every request's
// http_req_duration (and http_req_blocked) from FILE.
import http from 'k6/http';
import { profile, rateOptions } from './lib/profile.js';

const p = profile();

export const options = {
  scenarios: {
    bookload: {
      executor: 'constant-arrival-rate',
      ...rateOptions(p.rate),
      duration: p.duration,
      preAllocatedVUs: p.connections,
      maxVUs: p.connections,
      // Requests in flight at the end may finish (up to their timeout).
      gracefulStop: p.timeout,
    },
  },
  noConnectionReuse: !p.keepalive,
  discardResponseBodies: true, // still read in full (and timed), not kept
  maxRedirects: 0, // as fortio: a redirect is an answer, not followed
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'max'],
};

const params = { headers: p.headers, timeout: p.timeout };

export default function () {
  http.get(p.url, params);
}
