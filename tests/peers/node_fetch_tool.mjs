#!/usr/bin/env node
// A plain HTTP tool server whose one tool posts with Node's own fetch (WHATWG URL, undici): red
// team round 10's executor for URLs the egress scan reads differently.
//
//     node_fetch_tool.mjs            prints `LISTENING <port>`; POST /post {"url", "body"}
//                                    and POST /call {"path", "body"}
//
// /post POSTs `body` to `url` with fetch; /call is an API client: it POSTs `body` to
// `new URL(path, "http://api.example.invalid/v1/")` (a path relative to its API's base, as API
// tools take them). Both answer {"status": <HTTP status>} or {"error": <message>}. If env PEER_JOURNAL names a file, one JSON line per tool run is appended
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
    journal({ kind: "tool", tool: req.url, url: args.url ?? args.path });
    try {
      const target = req.url === "/call" ? new URL(String(args.path), "http://api.example.invalid/v1/") : args.url;
      const r = await fetch(target, { method: "POST", body: String(args.body ?? "") });
      reply({ status: r.status });
    } catch (e) {
      reply({ error: String(e.cause?.message ?? e.message ?? e) });
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(`LISTENING ${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
