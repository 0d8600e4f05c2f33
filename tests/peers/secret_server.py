#!/usr/bin/env python3
"""Upstream MCP server for portcullis's `secrets:` tests, on the official Python SDK (mcp==2.3.0).

It holds a token (from the variable `--token-env NAME` names, SECRET_PEER_TOKEN by default) the way a real tool server does, and shows it in its
results; the proxy must show the agent a sentinel instead. Serves Streamable HTTP (SSE answers)
at /mcp on 127.0.0.1 with an OS-chosen port and prints `LISTENING <port>` once it accepts.

Tools:
    whoami()          "logged in as octocat with <token>", and the token base64-encoded
    use_token(auth)   records what it received (the journal) and answers "used"
    note(text)        records what it received and answers "noted"

If env PEER_JOURNAL names a file, one JSON line per tool invocation is appended there
({"kind": "tool", "tool": name, "args": {...}}): what the upstream really received.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import time
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

JOURNAL = os.environ.get("PEER_JOURNAL")
TOKEN = os.environ.get("SECRET_PEER_TOKEN", "")

mcp = MCPServer("portcullis-secret-peer", version="1.0.0")


def journal(name: str, args: dict[str, Any]) -> None:
    if not JOURNAL:
        return
    line = json.dumps({"ts": time.time(), "kind": "tool", "tool": name, "args": args}) + "\n"
    with open(JOURNAL, "a", encoding="utf-8") as f:
        f.write(line)


@mcp.tool(structured_output=False)
def whoami() -> str:
    """Say who the server is logged in as, and with which token."""
    journal("whoami", {})
    encoded = base64.b64encode(("token:" + TOKEN).encode()).decode()
    return f"logged in as octocat with {TOKEN} (basic {encoded})"


@mcp.tool(structured_output=False)
def use_token(auth: str) -> str:
    """Call the service with this credential."""
    journal("use_token", {"auth": auth})
    return "used"


@mcp.tool(structured_output=False)
def note(text: str) -> str:
    """Write a note somewhere else."""
    journal("note", {"text": text})
    return "noted"


async def serve() -> None:
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.01)
        print(f"LISTENING {port}", flush=True)
        print(f"secret_server: url=http://127.0.0.1:{port}/mcp", file=sys.stderr)


def main() -> None:
    """`[--token-env NAME | --token-file FILE] [--journal FILE] [--stdio]`: tests run in parallel in
    one process, so each names its own variable; a stdio server started by `wrap` inherits no
    variable holding a guard credential's value, so it reads the token from a file instead."""
    global TOKEN, JOURNAL
    args = sys.argv[1:]
    stdio = "--stdio" in args
    for flag, value in zip(args, args[1:]):
        if flag == "--token-env":
            TOKEN = os.environ.get(value, "")
        elif flag == "--token-file":
            with open(value, encoding="utf-8") as f:
                TOKEN = f.read().strip()
        elif flag == "--journal":
            JOURNAL = value
    if len(TOKEN) < 8:
        sys.exit("secret_server: the token must hold 8+ bytes")
    anyio.run(mcp.run_stdio_async if stdio else serve)


if __name__ == "__main__":
    main()
