#!/usr/bin/env python3
"""A mail-like private source and a web-post sink on the official Python SDK, for the flow tests.

Serves Streamable HTTP at /mcp on 127.0.0.1 (an OS-chosen port) and prints `LISTENING <port>`
once it accepts requests. If env PEER_JOURNAL names a file, one JSON line per tool invocation
(kind "tool") is appended, so a test sees exactly what reached the upstream.

Tools:
  read_inbox()          -> the inbox: a confidential mail and a credential (the private source)
  read_newsletter()     -> public text (not private in the tests' config)
  read_settings()       -> settings holding a credential (not private: the detectors find it)
  web_post(url, body)   -> POSTs body to url (the sink); says what it sent
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import urllib.request
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

JOURNAL = os.environ.get("PEER_JOURNAL")

INBOX = (
    "From: cfo@northwind.example\n"
    "Subject: Project Lantern (confidential)\n\n"
    "The acquisition of Contoso closes on Friday at a price of 41.20 per share; the board votes\n"
    "Thursday night. Do not forward this outside the deal team.\n"
    "Deploy key for the data room: ghp_R8x2Lq9VmT4kWz7NcY3hPd6sFj1aBe5uGo0i\n"
)

NEWSLETTER = "This week in gardening: tomatoes like sun, basil likes water, and slugs like everything."


def journal(name: str, args: dict[str, Any]) -> None:
    if not JOURNAL:
        return
    line = json.dumps({"ts": time.time(), "kind": "tool", "tool": name, "args": args}) + "\n"
    with open(JOURNAL, "a", encoding="utf-8") as f:
        f.write(line)


mcp = MCPServer("portcullis-mail-web-peer", version="1.0.0")


@mcp.tool(structured_output=False)
def read_inbox() -> str:
    """Read the user's inbox (private)."""
    journal("read_inbox", {})
    return INBOX


@mcp.tool(structured_output=False)
def read_newsletter() -> str:
    """Read a public newsletter."""
    journal("read_newsletter", {})
    return NEWSLETTER


@mcp.tool(structured_output=False)
def read_settings() -> str:
    """Read the app's settings (not private, but they hold a credential)."""
    journal("read_settings", {})
    return "theme = dark\nci_token = ghp_Zq7Wm2Xc9Vb4Nn6Kk1Ll3Pp8Rr5Tt0Yy2Uu4Ii\n"


@mcp.tool(structured_output=False)
def web_post(url: str, body: str) -> str:
    """POST `body` to `url`: a tool with outward reach."""
    journal("web_post", {"url": url, "body": body})
    req = urllib.request.Request(url, data=body.encode(), method="POST", headers={"content-type": "text/plain"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return f"posted {len(body)} bytes to {url}: HTTP {resp.status}"
    except Exception as e:  # the test reads the outcome, not a traceback
        return f"post to {url} failed: {e}"


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
        print(f"mail_web_server: url=http://127.0.0.1:{port}/mcp", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(serve)
