#!/usr/bin/env python3
"""sse-peers — the two ends of an open MCP event stream, for scripts/bench-memory.

`upstream`: an MCP Streamable HTTP server that holds streams open.
  - `GET /mcp` (Accept: text/event-stream): 200 `text/event-stream`, chunked, one event at once
    (a `notifications/message` whose data is "open <n>"), then nothing but a `: ping` comment
    every --ping seconds, until the peer hangs up.
  - `POST /mcp` with a `tools/call` of the tool named "hold": 200 `text/event-stream` with one
    `notifications/message` event ("open <n>") and no result: a long-running call, held open.
  - any other `POST /mcp`: the fixed JSON-RPC result bench-overhead's nginx upstream answers.
  - `GET /stats`: {"open", "opened", "closed"}: streams now open, ever opened, ever closed.
  - `POST /broadcast?mark=M`: sends one `notifications/message` event "mark M" on every open
    stream; answers {"sent": n}.

`client`: opens --n streams through the proxy (--parallel at a time), each with its own
Mcp-Session-Id (--session-prefix and its number), checks every response head
(200, text/event-stream) and that every stream delivered its first event, then prints
`open N` and obeys one command a line on stdin:
  - `expect M`: waits until every stream has delivered the event "mark M"; prints `got N`.
  - `status`: prints `alive A dead D` (dead: streams that ended or failed since opening).
  - `close`: closes every stream; prints `closed N` and exits.
Any failure prints `fail <reason>` (and up to 5 examples on stderr) and exits 1.

Binds and connects to 127.0.0.1 only. Standard library only (asyncio), Python 3.11.

Usage: scripts/sse-peers.py upstream [--port 0] [--ping 20]
       scripts/sse-peers.py client --port P [--path /mcp/bench] [--n 1000] [--kind get|post]
                                   [--session-prefix bench-]
"""

import argparse
import asyncio
import json
import sys
import urllib.parse

RESULT = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}'


def event(data, id_=None):
    """One SSE event carrying a JSON-RPC notifications/message whose data is `data`."""
    msg = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}},
        separators=(",", ":"),
    )
    head = f"id: {id_}\n" if id_ is not None else ""
    return f"{head}data: {msg}\n\n".encode()


def chunk(b):
    return f"{len(b):x}\r\n".encode() + b + b"\r\n"


def plain(status, body, close, ctype="application/json"):
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 406: "Not Acceptable"}.get(status, "Error")
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    ).encode() + body


async def read_head(reader):
    """(request line parts, {lower-case header: value}) or None at EOF."""
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    headers = {}
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return parts, headers


# ------------------------------------------------------------------------------------- upstream


class Upstream:
    def __init__(self, ping):
        self.ping = ping
        self.streams = set()  # writers of the open streams
        self.opened = 0
        self.closed = 0

    async def hold(self, reader, writer, session):
        """Sends the stream's head and first event, then holds it until the peer hangs up."""
        self.opened += 1
        n = self.opened
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
        if session:
            head += f"Mcp-Session-Id: {session}\r\n"
        writer.write(head.encode() + b"\r\n" + chunk(event(f"open {n}", n)))
        self.streams.add(writer)
        try:
            await writer.drain()
            while True:
                # The peer sends nothing more on this connection; EOF means it hung up.
                try:
                    data = await asyncio.wait_for(reader.read(65536), self.ping if self.ping > 0 else None)
                except asyncio.TimeoutError:
                    writer.write(chunk(b": ping\n\n"))
                    await writer.drain()
                    continue
                if not data:
                    return
        finally:
            self.streams.discard(writer)
            self.closed += 1

    async def handle(self, reader, writer):
        try:
            while True:
                req = await read_head(reader)
                if req is None:
                    return
                parts, headers = req
                if len(parts) != 3:
                    writer.write(plain(400, b'{"error":"bad request line"}', True))
                    return
                method, target, _ = parts
                close = headers.get("connection", "").lower() == "close"
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                path, _, query = target.partition("?")
                session = headers.get("mcp-session-id")
                if method == "GET" and path == "/mcp":
                    if "text/event-stream" not in headers.get("accept", ""):
                        writer.write(plain(406, b'{"error":"Accept must include text/event-stream"}', True))
                        return
                    await self.hold(reader, writer, session)
                    return
                if method == "POST" and path == "/mcp":
                    try:
                        msg = json.loads(body)
                    except ValueError:
                        msg = None
                    if (
                        isinstance(msg, dict)
                        and msg.get("method") == "tools/call"
                        and (msg.get("params") or {}).get("name") == "hold"
                    ):
                        await self.hold(reader, writer, session)
                        return
                    writer.write(plain(200, RESULT, close))
                elif method == "GET" and path == "/stats":
                    s = {"open": len(self.streams), "opened": self.opened, "closed": self.closed}
                    writer.write(plain(200, json.dumps(s).encode(), close))
                elif method == "POST" and path == "/broadcast":
                    mark = urllib.parse.parse_qs(query).get("mark", ["?"])[0]
                    data = chunk(event(f"mark {mark}"))
                    for w in list(self.streams):
                        w.write(data)
                    writer.write(plain(200, json.dumps({"sent": len(self.streams)}).encode(), close))
                else:
                    writer.write(plain(404, b'{"error":"not found"}', close))
                await writer.drain()
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            writer.close()


async def upstream_main(a):
    up = Upstream(a.ping)
    # A deep backlog: the proxy opens up to --n upstream connections at once.
    server = await asyncio.start_server(up.handle, "127.0.0.1", a.port, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# --------------------------------------------------------------------------------------- client


class Stream:
    """One open stream: decodes the chunked body and collects the `data:` lines of its events."""

    def __init__(self, i):
        self.i = i
        self.writer = None
        self.events = []  # the `data` field of each event received
        self.new_event = asyncio.Event()
        self.ended = None  # why the stream ended, once it has
        self.task = None

    async def open(self, port, path, kind, timeout, prefix):
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        session = f"{prefix}{self.i}"
        if kind == "get":
            req = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session}\r\n\r\n"
            ).encode()
        else:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": self.i, "method": "tools/call", "params": {"name": "hold", "arguments": {"n": self.i}}},
                separators=(",", ":"),
            ).encode()
            req = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode() + body
        self.writer.write(req)
        await self.writer.drain()
        head = await asyncio.wait_for(read_head(reader), timeout)
        if head is None:
            raise RuntimeError("connection closed before a response head")
        (_, status, *_), headers = head
        ctype = headers.get("content-type", "")
        if status != "200" or not ctype.startswith("text/event-stream"):
            try:
                extra = await asyncio.wait_for(reader.read(300), 1)
            except (asyncio.TimeoutError, ConnectionError):
                extra = b""
            raise RuntimeError(f"HTTP {status} {ctype!r}: {extra[:300]!r}")
        self.task = asyncio.create_task(self.read(reader, "chunked" in headers.get("transfer-encoding", "").lower()))
        await asyncio.wait_for(self.wait_for(lambda d: d.startswith('{"jsonrpc"') and '"open ' in d), timeout)

    async def wait_for(self, pred):
        while not any(pred(d) for d in self.events):
            if self.ended is not None:
                raise RuntimeError(f"stream ended: {self.ended}")
            self.new_event.clear()
            await self.new_event.wait()

    async def read(self, reader, chunked):
        buf = b""
        try:
            while True:
                if chunked:
                    size_line = await reader.readline()
                    if not size_line:
                        break
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        break
                    data = await reader.readexactly(size)
                    await reader.readexactly(2)
                else:
                    data = await reader.read(65536)
                    if not data:
                        break
                buf += data.replace(b"\r\n", b"\n")
                while b"\n\n" in buf:
                    ev, buf = buf.split(b"\n\n", 1)
                    datas = [l[5:].lstrip() for l in ev.split(b"\n") if l.startswith(b"data:")]
                    if datas:
                        self.events.append(b"\n".join(datas).decode("utf-8", "replace"))
                        self.new_event.set()
            self.ended = "the server ended it"
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as e:
            self.ended = f"{type(e).__name__}: {e}"
        except asyncio.CancelledError:
            self.ended = "closed by us"
            raise
        finally:
            self.new_event.set()


def fail(reason, examples=()):
    for e in list(examples)[:5]:
        print(f"sse-peers: {e}", file=sys.stderr)
    print(f"fail {reason}", flush=True)
    sys.exit(1)


async def client_main(a):
    streams = [Stream(i) for i in range(1, a.n + 1)]
    gate = asyncio.Semaphore(a.parallel)
    errors = []

    async def open_one(s):
        async with gate:
            try:
                await s.open(a.port, a.path, a.kind, a.timeout, a.session_prefix)
            except Exception as e:  # every failure is reported, none ends the others
                errors.append(f"stream {s.i}: {type(e).__name__}: {e}")

    await asyncio.gather(*(open_one(s) for s in streams))
    if errors:
        fail(f"{len(errors)} of {a.n} streams did not open", errors)
    print(f"open {a.n}", flush=True)

    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    while True:
        line = (await stdin.readline()).decode().strip()
        if not line or line == "close":
            for s in streams:
                s.task.cancel()
                s.writer.close()
            await asyncio.gather(*(s.task for s in streams), return_exceptions=True)
            print(f"closed {a.n}", flush=True)
            return
        cmd, _, arg = line.partition(" ")
        if cmd == "status":
            dead = [s for s in streams if s.ended is not None]
            print(f"alive {a.n - len(dead)} dead {len(dead)}", flush=True)
            for s in dead[:5]:
                print(f"sse-peers: stream {s.i} ended: {s.ended}", file=sys.stderr)
        elif cmd == "expect":
            want = f'"mark {arg}"'
            missing = []

            async def expect_one(s):
                try:
                    await asyncio.wait_for(s.wait_for(lambda d: want in d), a.timeout)
                except Exception as e:
                    missing.append(f"stream {s.i}: no event {want}: {type(e).__name__}: {e}")

            await asyncio.gather(*(expect_one(s) for s in streams))
            if missing:
                fail(f"{len(missing)} of {a.n} streams did not deliver {want}", missing)
            print(f"got {a.n}", flush=True)
        else:
            fail(f"unknown command {line!r}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="role", required=True)
    u = sub.add_parser("upstream", help="the MCP server holding streams open")
    u.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    u.add_argument("--ping", type=float, default=20.0, help="seconds between `: ping` comments (0: none)")
    c = sub.add_parser("client", help="opens the streams through the proxy")
    c.add_argument("--port", type=int, required=True, help="the proxy's port on 127.0.0.1")
    c.add_argument("--path", default="/mcp/bench")
    c.add_argument("--n", type=int, default=1000, help="streams to open")
    c.add_argument("--kind", choices=["get", "post"], default="get", help="GET stream or POST tools/call held open")
    c.add_argument("--parallel", type=int, default=64, help="streams being opened at once")
    c.add_argument("--timeout", type=float, default=30.0, help="seconds for a head, a first event, a mark")
    c.add_argument("--session-prefix", default="bench-", help="stream i's Mcp-Session-Id is this and i")
    a = p.parse_args()
    try:
        asyncio.run(upstream_main(a) if a.role == "upstream" else client_main(a))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
