#!/usr/bin/env python3
"""MCP client (the official Python SDK, mcp==2.3.0) that makes its tool calls at once, as an agent
running tools in parallel does: each call is its own POST, in flight together.

    concurrent_client.py --url URL [--era legacy|modern] [--timeout S] TOOL...

stdout: one JSON line `{"step": "connect", "instructions": <the server's instructions or null>}`,
then one line per TOOL in the order given, once all are done:
`{"step": "call", "tool": NAME, "result": <CallToolResult>}` or `{..., "error": {"message": ...}}`.
Each tool is called with `{}` as its arguments.
"""

from __future__ import annotations

import argparse
import json
import warnings
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation
from mcp.types.version import LATEST_MODERN_VERSION

warnings.simplefilter("ignore")

ERA_TO_MODE = {"legacy": "legacy", "modern": LATEST_MODERN_VERSION}


def emit(line: dict[str, Any]) -> None:
    print(json.dumps(line, separators=(",", ":")), flush=True)


async def run(args: argparse.Namespace) -> None:
    lines: list[dict[str, Any]] = [{"step": "call", "tool": t} for t in args.tools]
    async with create_mcp_http_client(headers={}) as http:
        client = Client(
            streamable_http_client(args.url, http_client=http),
            mode=ERA_TO_MODE[args.era],
            read_timeout_seconds=args.timeout,
            cache=None,
            client_info=Implementation(name="portcullis-concurrent-client", version="1.0.0"),
        )
        async with client:
            emit({"step": "connect", "instructions": client.instructions})

            async def one(i: int) -> None:
                try:
                    r = await client.call_tool(args.tools[i], {})
                    lines[i]["result"] = r.model_dump(mode="json", by_alias=True, exclude_unset=True)
                except Exception as e:  # noqa: BLE001 - reported, the others go on
                    lines[i]["error"] = {"message": f"{type(e).__name__}: {e}"}

            async with anyio.create_task_group() as tg:
                for i in range(len(args.tools)):
                    tg.start_soon(one, i)
    for line in lines:
        emit(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--era", choices=sorted(ERA_TO_MODE), default="legacy")
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("tools", nargs="+")
    anyio.run(run, p.parse_args())


if __name__ == "__main__":
    main()
