'use strict';

// A raw-socket HTTP/1.1 client that reads responses strictly by their
// framing (Content-Length or chunked). A response without either would never
// resolve here, so the framing tests fail by timeout instead of passing.

const net = require('node:net');

function parseHead(text) {
  const [statusLine, ...lines] = text.split('\r\n');
  const headers = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers };
}

// Returns the body length and bytes consumed, or null if incomplete.
function chunkedBody(buffer, start) {
  let pos = start;
  const parts = [];
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', pos);
    if (lineEnd < 0) return null;
    const size = parseInt(buffer.subarray(pos, lineEnd).toString(), 16);
    if (buffer.length < lineEnd + 2 + size + 2) return null;
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
    if (size === 0) return { body: Buffer.concat(parts), end: pos };
  }
}

class RawConnection {
  constructor(port) {
    this.socket = net.connect(port, '127.0.0.1');
    this.buffer = Buffer.alloc(0);
    this.waiting = null;
    this.ended = false;
    this.closed = new Promise((resolve) => this.socket.once('close', resolve));
    // A reset ends the socket without 'end'; a pending send must fail then too.
    this.socket.once('close', () => {
      this.ended = true;
      this.tryResolve();
    });
    this.socket.on('data', (data) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.tryResolve();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.tryResolve();
    });
    this.socket.on('error', () => {});
  }

  connected() {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
  }

  // Sends raw bytes and resolves with the next complete response.
  // `head: true` for HEAD requests, whose responses have no body.
  send(text, { head = false } = {}) {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, head };
      this.socket.write(text);
      this.tryResolve();
    });
  }

  tryResolve() {
    if (this.waiting === null) return;
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd >= 0) {
      const { status, headers } = parseHead(this.buffer.subarray(0, headEnd).toString());
      const bodyStart = headEnd + 4;
      let parsed = null;
      // 1xx (100 Continue) and HEAD responses have no body by definition.
      if (this.waiting.head || status < 200) {
        parsed = { body: Buffer.alloc(0), end: bodyStart };
      } else if (headers['transfer-encoding'] === 'chunked') {
        parsed = chunkedBody(this.buffer, bodyStart);
      } else if (headers['content-length'] !== undefined) {
        const end = bodyStart + Number(headers['content-length']);
        if (this.buffer.length >= end) parsed = { body: this.buffer.subarray(bodyStart, end), end };
      }
      if (parsed !== null) {
        const { resolve } = this.waiting;
        this.waiting = null;
        this.buffer = this.buffer.subarray(parsed.end);
        resolve({ status, headers, body: parsed.body.toString() });
        return;
      }
    }
    if (this.ended) {
      const { reject } = this.waiting;
      this.waiting = null;
      reject(new Error(`connection ended before a framed response; got ${JSON.stringify(this.buffer.toString())}`));
    }
  }

  // Resolves true if the server closes the connection within ms.
  closedWithin(ms) {
    return Promise.race([this.closed.then(() => true), new Promise((resolve) => setTimeout(resolve, ms, false))]);
  }

  destroy() {
    this.socket.destroy();
  }
}

async function connect(port) {
  const connection = new RawConnection(port);
  await connection.connected();
  return connection;
}

function get(path, extraHeaders = '') {
  return `GET ${path} HTTP/1.1\r\nHost: test\r\n${extraHeaders}\r\n`;
}

module.exports = { connect, get };
