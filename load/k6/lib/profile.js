// The load profile of one bookload repetition, from BOOKLOAD_* environment
// variables (never K6_*: k6 reads K6_VUS, K6_DURATION, ... itself, and any of
// them makes it drop the script's scenarios).
//
//   BOOKLOAD_URL          request URL (base URL + the scenario's path)    required
//   BOOKLOAD_RATE         requests per second offered, over all connections required, > 0
//   BOOKLOAD_CONNECTIONS  at most this many connections (= VUs)            required, >= 1
//   BOOKLOAD_DURATION     one repetition, a k6 duration ("1500ms", "30s")  required
//   BOOKLOAD_TIMEOUT      per request (k6 duration)                       default "3s"
//   BOOKLOAD_KEEPALIVE    "true" | "false"                                default "true"
//   BOOKLOAD_HEADERS      extra request headers, a JSON object            default "{}"

function required(name) {
  const v = __ENV[name];
  if (v === undefined || v === '') {
    throw new Error(`${name} is not set (bookload passes the profile in BOOKLOAD_* variables)`);
  }
  return v;
}

function number(name, min) {
  const raw = required(name);
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) {
    throw new Error(`${name}=${raw}: want a number >= ${min}`);
  }
  return v;
}

function bool(name, dflt) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`${name}=${raw}: want true or false`);
}

function headers(name) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return {};
  let h;
  try {
    h = JSON.parse(raw);
  } catch (e) {
    throw new Error(`${name}: not a JSON object: ${e}`);
  }
  if (h === null || typeof h !== 'object' || Array.isArray(h)) {
    throw new Error(`${name}: want a JSON object of header name -> value`);
  }
  return h;
}

// rateOptions expresses requests per second as k6's integer rate per timeUnit.
export function rateOptions(perSecond) {
  if (Number.isInteger(perSecond)) return { rate: perSecond, timeUnit: '1s' };
  return { rate: Math.round(perSecond * 1000), timeUnit: '1000s' };
}

export function profile() {
  const rate = number('BOOKLOAD_RATE', Number.MIN_VALUE);
  const connections = number('BOOKLOAD_CONNECTIONS', 1);
  if (!Number.isInteger(connections)) {
    throw new Error(`BOOKLOAD_CONNECTIONS=${connections}: want an integer`);
  }
  return {
    url: required('BOOKLOAD_URL'),
    rate,
    connections,
    duration: required('BOOKLOAD_DURATION'),
    timeout: __ENV.BOOKLOAD_TIMEOUT || '3s',
    keepalive: bool('BOOKLOAD_KEEPALIVE', true),
    headers: headers('BOOKLOAD_HEADERS'),
  };
}
