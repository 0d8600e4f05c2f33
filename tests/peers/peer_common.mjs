// Shared plumbing for the Node launchers (everything_http.mjs, everything_sse.mjs).
//
// The upstream server-everything transports are express apps that call
// `app.listen(PORT)` (all interfaces, fixed port) and console.log to stdout.
// Tests need: loopback only, an OS-chosen port, one parseable `LISTENING <port>`
// line on stdout, and a journal of every HTTP request the upstream received.
// All of that is done here by patching Node built-ins BEFORE the upstream module
// is imported (the launchers use a dynamic import for that reason).

import fs from "node:fs";
import http from "node:http";
import net from "node:net";

// stdout is reserved for the LISTENING line: route console.log/info/debug to stderr.
const toStderr = (...args) => console.error(...args);
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;

const JOURNAL = process.env.PEER_JOURNAL;
const JOURNAL_HEADERS = new Set(["host", "origin", "content-type", "accept", "last-event-id"]);
const MAX_BODY = 16 * 1024 * 1024;

export function journal(peer, record) {
  if (!JOURNAL) return;
  // appendFileSync opens with O_APPEND and writes the line in one write(): lines stay whole.
  fs.appendFileSync(JOURNAL, JSON.stringify({ ts: Date.now() / 1000, peer, ...record }) + "\n");
}

function pickHeaders(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith("mcp-") || JOURNAL_HEADERS.has(k)) out[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

// Buffer the whole request body before the app sees the request, journal it,
// and leave it on `req.rawBody` (a Buffer). @hono/node-server (used by the MCP
// SDK's StreamableHTTPServerTransport) reads `rawBody` instead of the consumed
// stream; the SSE launcher hands it to SSEServerTransport explicitly.
function journalingListener(peer, listeners) {
  return function (req, res) {
    const chunks = [];
    let size = 0;
    const done = () => {
      const raw = Buffer.concat(chunks);
      const record = {
        kind: "http",
        method: req.method,
        path: req.url.split("?")[0],
        query: req.url.includes("?") ? req.url.slice(req.url.indexOf("?") + 1) : undefined,
        headers: pickHeaders(req.headers),
        has_authorization: "authorization" in req.headers,
        body: null,
      };
      if (raw.length > 0) {
        try {
          record.body = JSON.parse(raw.toString("utf8"));
        } catch {
          record.raw_body = raw.toString("utf8");
        }
      }
      journal(peer, record);
      req.rawBody = raw;
      for (const l of listeners) l.call(this, req, res);
    };
    if (req.method === "GET" || req.method === "HEAD") return done();
    req.on("data", (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", done);
    req.on("error", () => res.destroy());
  };
}

// Force every listen() onto 127.0.0.1 with port 0, whatever the upstream asked
// for, and print `LISTENING <port>` once the (first) HTTP server is up.
export function installLoopbackListen(peer) {
  const origListen = net.Server.prototype.listen;
  let announced = false;
  net.Server.prototype.listen = function (...args) {
    const cb = args.find((a) => typeof a === "function");
    if (this instanceof http.Server && JOURNAL) {
      const listeners = this.listeners("request");
      this.removeAllListeners("request");
      this.on("request", journalingListener(peer, listeners));
    }
    this.once("listening", () => {
      if (announced) return;
      announced = true;
      const { address, port } = this.address();
      process.stdout.write(`LISTENING ${port}\n`);
      console.error(`${peer}: listening on http://${address}:${port}`);
    });
    return cb ? origListen.call(this, { host: "127.0.0.1", port: 0 }, cb) : origListen.call(this, { host: "127.0.0.1", port: 0 });
  };
}

// Exit cleanly on SIGTERM (tests kill children); the upstream only handles SIGINT.
process.on("SIGTERM", () => process.exit(0));
