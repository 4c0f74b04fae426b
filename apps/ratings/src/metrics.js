'use strict';

// A two-metric Prometheus registry. Hand-rolled rather than prom-client
// because the catalogue fixes exactly two metrics, and recording one request
// here costs a string key, one Map lookup and a short bucket scan.

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabel(value) {
  return String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

class HttpMetrics {
  constructor() {
    this.series = new Map();
  }

  observe(method, route, status, seconds) {
    const key = `${method} ${route} ${status}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        labels: `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status="${escapeLabel(status)}"`,
        // Per-bucket (not cumulative) counts; the last slot is +Inf.
        buckets: new Array(BUCKETS.length + 1).fill(0),
        count: 0,
        sum: 0,
      };
      this.series.set(key, series);
    }
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    series.buckets[i]++;
    series.count++;
    series.sum += seconds;
  }

  render() {
    const all = [...this.series.values()];
    const lines = [
      '# HELP http_requests_total HTTP requests handled, by method, route pattern and status.',
      '# TYPE http_requests_total counter',
    ];
    for (const s of all) lines.push(`http_requests_total{${s.labels}} ${s.count}`);
    lines.push(
      '# HELP http_request_duration_seconds Time from request received to response sent, by method, route pattern and status.',
      '# TYPE http_request_duration_seconds histogram',
    );
    for (const s of all) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i];
        lines.push(`http_request_duration_seconds_bucket{${s.labels},le="${le}"} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{${s.labels},le="+Inf"} ${s.count}`);
      lines.push(`http_request_duration_seconds_sum{${s.labels}} ${s.sum}`);
      lines.push(`http_request_duration_seconds_count{${s.labels}} ${s.count}`);
    }
    return lines.join('\n') + '\n';
  }
}

module.exports = { HttpMetrics, BUCKETS, CONTENT_TYPE };
