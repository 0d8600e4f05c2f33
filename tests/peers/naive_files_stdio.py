"""A naive file tool over stdio, built on the official Python SDK (mcp==2.3.0): `read_text(path)`
opens whatever path it is given, relative to its own working directory (`--chdir DIR`, where a
real tool would keep its data). It trusts the guard in front of it to have judged the path —
the red team's peer for paths that mean one file to the proxy and another to the tool
(`/proc/self/cwd`, `/dev/fd/N`). Serves MCP on stdin/stdout; logs nothing to stdout.
"""

from __future__ import annotations

import argparse
import os

import anyio
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("portcullis-naive-files", version="1.0.0")


@mcp.tool(structured_output=False)
def read_text(path: str) -> str:
    """Return the text of the file at `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chdir", required=True, help="the tool's working directory")
    args = parser.parse_args()
    os.chdir(args.chdir)
    anyio.run(mcp.run_stdio_async)


if __name__ == "__main__":
    main()
