#!/usr/bin/env node
// A plain HTTP tool server whose one tool posts with Node's own fetch (WHATWG URL, undici): red
// team round 10's executor for URLs the egress scan reads differently.
//
//     node_fetch_tool.mjs            prints `LISTENING <port>`; POST /post {"url", "body"}
//
// The tool POSTs `body` to `url` with fetch and answers {"status": <HTTP status>} or
// {"error": <message>}. If env PEER_JOURNAL names a file, one JSON line per tool run is appended
// (kind "tool", with the url as received).
import { createServer } from "node:http";
import { appendFileSync } from "node:fs";

const journal = (record) => {
  if (process.env.PEER_JOURNAL) appendFileSync(process.env.PEER_JOURNAL, JSON.stringify(record) + "\n");
};

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", async () => {
    const reply = (obj) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(obj));
    };
    let args;
    try {
      args = JSON.parse(raw);
    } catch {
      return reply({ error: "arguments are not JSON" });
    }
    journal({ kind: "tool", tool: req.url, url: args.url });
    try {
      const r = await fetch(args.url, { method: "POST", body: String(args.body ?? "") });
      reply({ status: r.status });
    } catch (e) {
      reply({ error: String(e.cause?.message ?? e.message ?? e) });
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(`LISTENING ${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
