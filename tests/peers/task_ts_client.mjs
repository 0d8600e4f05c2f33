#!/usr/bin/env node
// MCP client (the official TypeScript SDK, as pinned in package-lock.json) that calls one tool as a
// task (SEP-1686, `client.experimental.tasks.callToolStream` with a `task` request option): the
// server answers `tools/call` with a task, the SDK polls `tasks/get`, and reads the tool's output
// from `tasks/result`.
//
//     task_ts_client.mjs URL TOOL JSON_ARGS
//
// stdout: one JSON line per message the stream yields (`{"type": "taskCreated"|"taskStatus"|
// "result"|"error", ...}`), the last being the result or the error. Exit status 1 when the
// connection cannot be set up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, name, json] = process.argv.slice(2);
const client = new Client({ name: "portcullis-task-ts-client", version: "1.0.0" }, { capabilities: {} });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
} catch (e) {
  console.log(JSON.stringify({ type: "connect", error: { code: e.code ?? null, message: String(e.message ?? e) } }));
  process.exit(1);
}
const out = (line) => process.stdout.write(JSON.stringify(line) + "\n");
try {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: JSON.parse(json) }, CallToolResultSchema, {
    task: { ttl: 60000 },
    timeout: 30000,
  });
  for await (const message of stream) {
    if (message.type === "error") {
      out({ type: "error", error: { code: message.error?.code ?? null, message: String(message.error?.message ?? message.error) } });
    } else {
      out(message);
    }
  }
} catch (e) {
  out({ type: "error", error: { code: e.code ?? null, message: String(e.message ?? e) } });
}
await client.close();
process.exit(0);
