'use strict';

// The SERVICE_VERSION variants the Istio resilience tasks rely on. Upstream flips a flag with setInterval; deriving the
// phase from a clock instead gives the same alternation and lets tests pick any moment.

const DELAY_MS = 7000;
const UNAVAILABLE_PERIOD_MS = 60 * 1000;
const UNHEALTHY_PERIOD_MS = 15 * 60 * 1000;

const OK = { kind: 'ok' };
const UNAVAILABLE = { kind: 'unavailable' };
const DELAYED = { kind: 'delayed', delayMs: DELAY_MS };

// Odd periods since start are the "off" phase: every variant starts healthy, as upstream does.
function inOffPhase(now, startedAt, periodMs) {
  return Math.floor((now() - startedAt) / periodMs) % 2 === 1;
}

function createBehaviour(version, { now = Date.now, random = Math.random, startedAt = now() } = {}) {
  switch (version) {
    case 'v1':
      return { ratingsOutcome: () => OK, healthy: () => true };
    case 'v-faulty':
      // Upstream tests Math.random() <= 0.5, kept for the same split.
      return { ratingsOutcome: () => (random() <= 0.5 ? UNAVAILABLE : OK), healthy: () => true };
    case 'v-delayed':
      return { ratingsOutcome: () => (random() <= 0.5 ? DELAYED : OK), healthy: () => true };
    case 'v-unavailable':
      return {
        ratingsOutcome: () => (inOffPhase(now, startedAt, UNAVAILABLE_PERIOD_MS) ? UNAVAILABLE : OK),
        healthy: () => true,
      };
    case 'v-unhealthy': {
      const healthy = () => !inOffPhase(now, startedAt, UNHEALTHY_PERIOD_MS);
      return { ratingsOutcome: () => (healthy() ? OK : UNAVAILABLE), healthy };
    }
    default:
      throw new Error(`unknown SERVICE_VERSION ${version}`);
  }
}

module.exports = { createBehaviour, DELAY_MS, UNAVAILABLE_PERIOD_MS, UNHEALTHY_PERIOD_MS };
