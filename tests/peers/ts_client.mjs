#!/usr/bin/env node
// Scripted MCP client for portcullis tests, built on the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned through package-lock.json as server-everything's dependency).
//
//     ts_client.mjs URL STEP...
//
// STEP is one of
//     call NAME JSON_ARGS       tools/call
//     resources                 resources/list
//     read URI                  resources/read
//     prompts                   prompts/list
//     prompt NAME JSON_ARGS     prompts/get
//     complete PROMPT ARG VALUE completion/complete of a prompt's argument
//
// stdout: exactly one JSON line per step, in order: {"step", "tool", "result"} or
// {"step", "tool", "error": {"code", "message"}} (a JSON-RPC error; the next step runs).
// Exit status 1 when the connection cannot be set up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, ...args] = process.argv.slice(2);
const client = new Client({ name: "portcullis-ts-test-client", version: "1.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
} catch (e) {
  console.log(JSON.stringify({ step: "connect", error: { code: e.code ?? null, message: String(e.message ?? e) } }));
  process.exit(1);
}

const out = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const opts = { timeout: 20000 };
let i = 0;
while (i < args.length) {
  const step = args[i++];
  let tool = null;
  let run;
  switch (step) {
    case "call": {
      const [name, json] = [args[i++], args[i++]];
      tool = name;
      run = () => client.callTool({ name, arguments: JSON.parse(json) }, undefined, opts);
      break;
    }
    case "resources":
      run = () => client.listResources({}, opts);
      break;
    case "read": {
      const uri = args[i++];
      tool = uri;
      run = () => client.readResource({ uri }, opts);
      break;
    }
    case "prompts":
      run = () => client.listPrompts({}, opts);
      break;
    case "prompt": {
      const [name, json] = [args[i++], args[i++]];
      tool = name;
      run = () => client.getPrompt({ name, arguments: JSON.parse(json) }, opts);
      break;
    }
    case "complete": {
      const [name, arg, value] = [args[i++], args[i++], args[i++]];
      tool = name;
      run = () => client.complete({ ref: { type: "ref/prompt", name }, argument: { name: arg, value } }, opts);
      break;
    }
    default:
      out({ step, error: { code: null, message: `unknown step ${step}` } });
      process.exit(2);
  }
  try {
    out({ step, tool, result: await run() });
  } catch (e) {
    out({ step, tool, error: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
await client.close();
process.exit(0);
