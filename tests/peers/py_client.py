#!/usr/bin/env python3
"""Scripted MCP client for portcullis tests, built on the official Python SDK (mcp==2.3.0).

    py_client.py (--url URL | --stdio JSON_ARGV) [--era modern|legacy|auto] [--transport streamable|sse]
                 [--header K:V ...] [--timeout SECONDS] [--no-validate] [--verbose]
                 [--protocol VERSION] [--elicit ANSWER,ANSWER,...] STEP...

STEP is one of
    list                          tools/list
    pages                         tools/list, following nextCursor to the last page
    call NAME JSON_ARGS           tools/call
    call-progress NAME JSON_ARGS  tools/call with a progress callback (sends a progressToken)
    resources                     resources/list
    templates                     resources/templates/list
    read URI                      resources/read
    subscribe URI                 resources/subscribe
    prompts                       prompts/list
    prompt NAME JSON_ARGS         prompts/get (string arguments)
    complete PROMPT ARG VALUE     completion/complete of a prompt's argument

stdout: exactly one JSON line per step, in order:
    {"step": "list", "tools": [names], "result": <ListToolsResult>}
    {"step": "pages", "pages": [[names], ...], "cursors": [nextCursor, ...], "result": <the last page>}
    {"step": "read"|"subscribe"|"prompt"|"complete"|..., "tool": URI or NAME, "result": <the SDK's result>}
    {"step": "call"|"call-progress", "tool": NAME, "result": <CallToolResult>, "progress": [...]}
    {"step": ..., "tool": ..., "error": {"code": int|null, "message": str, "data": ..., "kind": ...}}
With --elicit the client declares the elicitation capability and answers each elicitation it
receives with the next ANSWER: allow_once | allow_session | deny (accept with that `decision`),
sure (accept with {"sure": true}, the Python peer's confirm_delete form), decline, cancel, or
error (a JSON-RPC error); a step during which elicitations arrived also
carries "elicitations": [{"message": str, "choices": [...]}]; one during which log messages
(notifications/message) arrived carries "logs": [<their params>]. --protocol pins the legacy
handshake's offered version (e.g. 2025-06-18; the SDK offers its latest otherwise).
Results are the SDK models dumped as JSON by alias (wire names, e.g. structuredContent, isError).
A JSON-RPC error is reported as an error line (kind "jsonrpc") and the next step runs; so is a
client-side failure such as output-schema validation (kind "client"). If the connection cannot be
set up or the transport breaks, an error line (step "connect" or the current step, kind "transport"
or "jsonrpc") is printed and the exit status is 1.

stderr: `NEGOTIATED era=<modern|legacy> protocol=<version>` once connected, plus SDK logs.

--era maps to the SDK's `Client(mode=...)`:
    legacy -> mode="legacy": initialize handshake, Mcp-Session-Id, DELETE at exit
    modern -> mode="2026-07-28": adopt 2026-07-28 directly, no probe and no handshake on the wire
    auto   -> mode="auto" (SDK default): probe server/discover, fall back to initialize
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from typing import Any

import anyio
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult, ErrorData, Implementation, PromptReference
from mcp.types.version import LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS

warnings.simplefilter("ignore")  # deprecation chatter from the SDK would only clutter stderr

ERA_TO_MODE = {"legacy": "legacy", "modern": LATEST_MODERN_VERSION, "auto": "auto"}


def emit(line: dict[str, Any]) -> None:
    print(json.dumps(line, separators=(",", ":")), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def error_info(exc: BaseException) -> dict[str, Any]:
    """MCPError -> its JSON-RPC error; anything else -> code null with the exception text."""
    if isinstance(exc, MCPError):
        info: dict[str, Any] = {"code": exc.code, "message": exc.message, "kind": "jsonrpc"}
        if exc.data is not None:
            info["data"] = exc.data
        return info
    return {"code": None, "message": f"{type(exc).__name__}: {exc}", "kind": "client"}


def parse_steps(parser: argparse.ArgumentParser, tokens: list[str]) -> list[tuple[str, str | None, dict[str, Any] | None]]:
    steps: list[tuple[str, str | None, dict[str, Any] | None]] = []
    i = 0
    while i < len(tokens):
        kind = tokens[i]
        if kind in ("list", "pages"):
            steps.append((kind, None, None))
            i += 1
        elif kind in ("call", "call-progress"):
            if i + 2 >= len(tokens):
                parser.error(f"{kind} needs NAME JSON_ARGS")
            try:
                args = json.loads(tokens[i + 2])
            except ValueError as e:
                parser.error(f"{kind} {tokens[i + 1]}: JSON_ARGS is not JSON: {e}")
            if not isinstance(args, dict):
                parser.error(f"{kind} {tokens[i + 1]}: JSON_ARGS must be a JSON object")
            steps.append((kind, tokens[i + 1], args))
            i += 3
        elif kind in ("resources", "templates", "prompts"):
            steps.append((kind, None, None))
            i += 1
        elif kind in ("read", "subscribe"):
            if i + 1 >= len(tokens):
                parser.error(f"{kind} needs URI")
            steps.append((kind, tokens[i + 1], None))
            i += 2
        elif kind == "prompt":
            if i + 2 >= len(tokens):
                parser.error("prompt needs NAME JSON_ARGS")
            steps.append((kind, tokens[i + 1], json.loads(tokens[i + 2])))
            i += 3
        elif kind == "complete":
            if i + 3 >= len(tokens):
                parser.error("complete needs PROMPT ARG VALUE")
            steps.append((kind, tokens[i + 1], {"name": tokens[i + 2], "value": tokens[i + 3]}))
            i += 4
        else:
            parser.error(f"unknown step {kind!r} (expected list, pages, call, call-progress, resources, templates, read, subscribe, prompts, prompt, complete)")
    return steps


def leaves(exc: BaseException) -> list[BaseException]:
    """Flatten anyio's exception groups: the SDK raises connect-time errors wrapped in them."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def elicitation_callback(answers: list[str], seen: list[dict[str, Any]]):
    """Answers elicitations from a script, recording what each one showed."""

    async def callback(context: Any, params: Any) -> ElicitResult | ErrorData:
        schema = getattr(params, "requested_schema", None) or {}
        choices = schema.get("properties", {}).get("decision", {}).get("enum", [])
        seen.append({"message": getattr(params, "message", ""), "choices": choices})
        answer = answers.pop(0) if answers else "cancel"
        if answer in ("allow_once", "allow_session", "deny"):
            return ElicitResult(action="accept", content={"decision": answer})
        if answer == "sure":  # the Python peer's own confirm_delete form
            return ElicitResult(action="accept", content={"sure": True})
        if answer == "error":
            return ErrorData(code=-32603, message="this client cannot show forms right now")
        return ElicitResult(action=answer)

    return callback


async def run(args: argparse.Namespace, steps: list[tuple[str, str | None, dict[str, Any] | None]]) -> int:
    headers = dict(args.header)
    elicited: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    logged: list[Any] = []

    async def on_log(params: Any) -> None:
        logged.append(dump(params))

    extra["logging_callback"] = on_log
    if args.elicit is not None:
        extra["elicitation_callback"] = elicitation_callback([a for a in args.elicit.split(",") if a], elicited)
    current: dict[str, Any] = {"step": "connect"}  # what to name in an error line if the run breaks
    # The SDK leaves a caller-supplied httpx2 client open, so this process owns its lifetime;
    # supplying one is the SDK's way to add request headers (e.g. Authorization).
    async with create_mcp_http_client(headers=headers) as http:
        try:
            if args.stdio:  # a stdio server (e.g. `portcullis wrap -- …`): spawn it, speak on its pipes
                argv = json.loads(args.stdio)
                transport = stdio_client(StdioServerParameters(command=argv[0], args=argv[1:]))
            elif args.transport == "sse":  # legacy HTTP+SSE (2024-11-05): GET URL opens the stream
                transport = sse_client(args.url, headers=headers, timeout=args.timeout)
            else:
                transport = streamable_http_client(args.url, http_client=http)
            client = Client(
                transport,
                mode=ERA_TO_MODE[args.era],
                read_timeout_seconds=args.timeout,
                cache=None,  # no client-side response cache: every step must hit the wire
                client_info=Implementation(name="portcullis-py-client", version="1.0.0"),
                **extra,
            )
            async with client:
                era = "modern" if client.protocol_version in MODERN_PROTOCOL_VERSIONS else "legacy"
                print(f"NEGOTIATED era={era} protocol={client.protocol_version}", file=sys.stderr, flush=True)
                for kind, name, call_args in steps:
                    line: dict[str, Any] = {"step": kind}
                    if name is not None:
                        line["tool"] = name
                    current = dict(line)
                    progress: list[dict[str, Any]] = []

                    async def on_progress(p: float, total: float | None, message: str | None) -> None:
                        progress.append({"progress": p, "total": total, "message": message})

                    try:
                        if kind == "list":
                            result = await client.list_tools()
                            line["tools"] = [t.name for t in result.tools]
                        elif kind == "pages":
                            line["pages"], line["cursors"], cursor = [], [], None
                            while len(line["pages"]) < 50:  # a server that never stops paging is not followed forever
                                result = await client.list_tools(cursor=cursor)
                                line["pages"].append([t.name for t in result.tools])
                                line["cursors"].append(result.next_cursor)
                                cursor = result.next_cursor
                                if cursor is None:
                                    break
                        elif kind == "resources":
                            result = await client.list_resources()
                        elif kind == "templates":
                            result = await client.list_resource_templates()
                        elif kind == "read":
                            result = await client.read_resource(name)
                        elif kind == "subscribe":
                            result = await client.subscribe_resource(name)
                        elif kind == "prompts":
                            result = await client.list_prompts()
                        elif kind == "prompt":
                            result = await client.get_prompt(name, call_args)
                        elif kind == "complete":
                            result = await client.complete(PromptReference(type="ref/prompt", name=name), call_args)
                        else:
                            cb = on_progress if kind == "call-progress" else None
                            result = await client.call_tool(name, call_args, progress_callback=cb)
                        line["result"] = dump(result)
                    except (MCPError, RuntimeError, ValueError) as exc:
                        # A JSON-RPC error (incl. ones the SDK synthesizes from a bare HTTP status) or a
                        # client-side check (RuntimeError / pydantic ValidationError): report, go on.
                        # Transport failures surface as other exceptions and end the run below.
                        line["error"] = error_info(exc)
                    if kind == "call-progress":
                        line["progress"] = progress
                    if logged:
                        line["logs"] = list(logged)
                        logged.clear()
                    if elicited:
                        line["elicitations"] = list(elicited)
                        elicited.clear()
                    emit(line)
        except BaseException as exc:  # noqa: BLE001 - anything escaping here ends the run
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            found = leaves(exc)
            broken = [e for e in found if not isinstance(e, (MCPError, RuntimeError, ValueError))]
            info = error_info(broken[0] if broken else found[0])
            if broken:  # e.g. httpx2.ConnectError, a dropped connection
                info["kind"] = "transport"
            emit({**current, "error": info})
            if args.verbose:
                traceback.print_exception(exc)
            return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    parser.add_argument("--stdio", metavar="JSON_ARGV", help='spawn a stdio server instead: a JSON array, e.g. \'["portcullis","wrap","--","node","server.js"]\'')
    parser.add_argument("--era", choices=sorted(ERA_TO_MODE), default="auto")
    parser.add_argument(
        "--transport",
        choices=["streamable", "sse"],
        default="streamable",
        help="streamable (default) = Streamable HTTP; sse = legacy HTTP+SSE (use with --era legacy)",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        type=lambda s: tuple(part.strip() for part in s.split(":", 1)) if ":" in s else parser.error(f"bad header {s!r}"),
        metavar="K:V",
        help="extra HTTP request header, repeatable",
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request read timeout in seconds")
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="skip the SDK's client-side outputSchema check of tool results (it also lists tools "
        "implicitly before the first call of a not-yet-listed tool)",
    )
    parser.add_argument("--verbose", action="store_true", help="print tracebacks on stderr")
    parser.add_argument("--protocol", help="legacy handshake: the version to offer (default: the SDK's latest)")
    parser.add_argument("--elicit", metavar="ANSWERS", help="declare elicitation; answer with these, in order")
    parser.add_argument("steps", nargs="+", metavar="STEP")
    args = parser.parse_args()
    if bool(args.url) == bool(args.stdio):
        parser.error("give exactly one of --url and --stdio")
    steps = parse_steps(parser, args.steps)  # usage errors exit 2 before any connection
    if args.protocol:
        import mcp.client.session as client_session

        client_session.LATEST_HANDSHAKE_VERSION = args.protocol  # type: ignore[attr-defined]
    if args.no_validate:

        async def no_validation(self: ClientSession, name: str, result: Any) -> None:
            return None

        ClientSession.validate_tool_result = no_validation  # type: ignore[method-assign]
    return anyio.run(run, args, steps)


if __name__ == "__main__":
    sys.exit(main())
