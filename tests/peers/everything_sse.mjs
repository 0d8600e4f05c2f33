#!/usr/bin/env node
// Launch @modelcontextprotocol/server-everything's legacy HTTP+SSE transport
// (protocol 2024-11-05 style: GET /sse opens the event stream and names a
// POST endpoint `/message?sessionId=…`) on 127.0.0.1 with an OS-chosen port.
//
//   node everything_sse.mjs             -> stdout: `LISTENING <port>`; endpoint http://127.0.0.1:<port>/sse
//   PEER_JOURNAL=/path/file.jsonl node everything_sse.mjs   -> journal as in everything_http.mjs
//
// Upstream quirk: a POST /message with an unknown sessionId is never answered (the request hangs).
import { createRequire } from "node:module";
import path from "node:path";
import { installLoopbackListen } from "./peer_common.mjs";

installLoopbackListen("everything_sse");

// The journal drains the request body before the app runs (see peer_common.mjs),
// so SSEServerTransport must be handed that body instead of re-reading the stream.
// Patch the exact SDK copy server-everything resolves, and refuse to run if ours differs.
const { SSEServerTransport } = await import("@modelcontextprotocol/sdk/server/sse.js");
const require = createRequire(import.meta.url);
const sdkRoot = (p) => p.slice(0, p.lastIndexOf(`${path.sep}dist${path.sep}`));
const everythingEntry = require.resolve("@modelcontextprotocol/server-everything/dist/transports/sse.js");
const theirs = sdkRoot(createRequire(everythingEntry).resolve("@modelcontextprotocol/sdk/server/sse.js"));
const ours = sdkRoot(require.resolve("@modelcontextprotocol/sdk/server/sse.js"));
if (theirs !== ours) {
  console.error(`everything_sse: SDK copies differ (${theirs} vs ${ours}); cannot patch`);
  process.exit(1);
}
const origHandlePost = SSEServerTransport.prototype.handlePostMessage;
SSEServerTransport.prototype.handlePostMessage = function (req, res, parsedBody) {
  if (parsedBody === undefined && Buffer.isBuffer(req.rawBody)) parsedBody = req.rawBody.toString("utf8");
  return origHandlePost.call(this, req, res, parsedBody);
};

await import("@modelcontextprotocol/server-everything/dist/transports/sse.js");
