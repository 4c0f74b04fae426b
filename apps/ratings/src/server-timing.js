'use strict';

// The W3C Server-Timing header (docs/contract.md, "Server-Timing"): ratings
// calls nobody, so it says one thing, app;dur=<ms>, the time from the
// request reaching Express to its response head being written.
//
// Node has no "before the head goes out" event, so the middleware wraps this
// one response's writeHead, which Node calls for every response (res.send
// included, through _implicitHeader), as the expressjs on-headers module
// does for response-time. Taken at the head, the time also covers answers
// written later than the handler returns (v-delayed, the async /metrics).

function serverTiming() {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    const writeHead = res.writeHead;
    res.writeHead = function timedWriteHead(...args) {
      if (!this.headersSent) {
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        this.setHeader('Server-Timing', `app;dur=${ms.toFixed(3)}`);
      }
      return writeHead.apply(this, args);
    };
    next();
  };
}

module.exports = { serverTiming };
