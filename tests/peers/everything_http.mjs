#!/usr/bin/env node
// Launch @modelcontextprotocol/server-everything's Streamable HTTP transport
// (a legacy-era server: TS SDK 1.x, protocol 2024-11-05 … 2025-11-25, stateful
// Mcp-Session-Id sessions) on 127.0.0.1 with an OS-chosen port.
//
//   node everything_http.mjs            -> stdout: `LISTENING <port>`; endpoint http://127.0.0.1:<port>/mcp
//   PEER_JOURNAL=/path/file.jsonl node everything_http.mjs
//                                       -> one JSON line per HTTP request received (see README.md)
//
// No arguments. All upstream logging goes to stderr.
import { installLoopbackListen } from "./peer_common.mjs";

installLoopbackListen("everything_http");
// Dynamic import: the patches above must be in place before the module runs app.listen().
await import("@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js");
