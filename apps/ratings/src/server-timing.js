'use strict';

// The W3C Server-Timing header (docs/contract.md, "Server-Timing"): app;dur=<ms>, from the read of the request's first
// byte (req.began, the serving layer's; the request reaching Express where there is none) to its response head being
// written. Node has no "before the head goes out" event, so this one response's writeHead (called for every response)
// is wrapped, as the expressjs on-headers module does; answers written after the handler returns (v-delayed) count too.

function serverTiming() {
  return (req, res, next) => {
    const start = req.began ?? process.hrtime.bigint();
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
