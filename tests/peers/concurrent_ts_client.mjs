#!/usr/bin/env node
// MCP client (the official TypeScript SDK, @modelcontextprotocol/sdk as pinned in package-lock.json)
// that makes its tool calls at once, as an agent running tools in parallel does: each call is its
// own POST, in flight together.
//
//     concurrent_ts_client.mjs URL TOOL...
//
// stdout: one JSON line per TOOL in the order given, once all are done:
// {"step": "call", "tool", "result"} or {"step": "call", "tool", "error": {"code", "message"}}.
// Each tool is called with {} as its arguments. Exit status 1 when the connection cannot be set up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, ...tools] = process.argv.slice(2);
const client = new Client({ name: "portcullis-concurrent-ts-client", version: "1.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
} catch (e) {
  console.log(JSON.stringify({ step: "connect", error: { code: e.code ?? null, message: String(e.message ?? e) } }));
  process.exit(1);
}
const lines = await Promise.all(
  tools.map((name) =>
    client
      .callTool({ name, arguments: {} }, undefined, { timeout: 20000 })
      .then((result) => ({ step: "call", tool: name, result }))
      .catch((e) => ({ step: "call", tool: name, error: { code: e.code ?? null, message: String(e.message ?? e) } })),
  ),
);
for (const line of lines) process.stdout.write(JSON.stringify(line) + "\n");
await client.close();
process.exit(0);
