#!/usr/bin/env python3
"""fake-checker — a stand-in OpenAI Chat Completions server for benchmarks (scripts/bench-checker).

Answers every `POST {anything}/chat/completions` after a fixed delay with a chat completion whose
content is the verdict `{"safe":true,"reason":"ok"}`. `GET /stats` answers `{"requests": N, "connections": M}`:
the completions served and the connections accepted so far (its own included), so a benchmark can
prove how many model calls were made and whether the client reused its connections. With `--log FILE`, appends one JSON line per completion: `{"n", "bytes", "user"}`, the
user message (the fenced content) cut to 400 characters.

Binds 127.0.0.1 only; port 0 (the default) picks a free port. The bound port is printed alone
on the first line of stdout. Standard library only: asyncio streams, HTTP/1.1 keep-alive, one
write per response (no Nagle/delayed-ACK stalls between headers and body).

With `--n-ctx N`, a prompt over N tokens (estimated as bytes / 4, as a model server would count
roughly) gets llama.cpp's HTTP 400 `exceed_context_size_error` instead, as `llama-server -c N` sends.

Usage: scripts/fake-checker.py [--port 0] [--delay-ms 20] [--log FILE] [--n-ctx 4096]
"""

import argparse
import asyncio
import json
import sys
import time

VERDICT = '{"safe":true,"reason":"ok"}'


def completion_body(model):
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": VERDICT},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
        separators=(",", ":"),
    ).encode()


def response(status, body, close):
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    return head.encode() + body


class Checker:
    def __init__(self, delay, log, n_ctx=None):
        self.delay = delay
        self.n_ctx = n_ctx
        self.log = log
        self.requests = 0
        self.connections = 0

    def record(self, body, request):
        self.requests += 1
        if self.log is None:
            return
        user = ""
        for m in request.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "user":
                user = str(m.get("content", ""))
        self.log.write(json.dumps({"n": self.requests, "bytes": len(body), "user": user[:400]}) + "\n")
        self.log.flush()

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                parts = line.decode("latin-1").split()
                if len(parts) != 3:
                    writer.write(response(400, b'{"error":"bad request line"}', True))
                    return
                method, target, _ = parts
                length, close = 0, False
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = h.decode("latin-1").partition(":")
                    name, value = name.strip().lower(), value.strip()
                    if name == "content-length":
                        length = int(value)
                    elif name == "connection" and value.lower() == "close":
                        close = True
                body = await reader.readexactly(length) if length else b""
                if method == "GET" and target == "/stats":
                    out = response(200, json.dumps({"requests": self.requests, "connections": self.connections}).encode(), close)
                elif method == "POST" and target.endswith("/chat/completions"):
                    try:
                        request = json.loads(body)
                    except ValueError:
                        request = None
                    if not isinstance(request, dict):
                        out = response(400, b'{"error":{"message":"body is not a JSON object"}}', close)
                    else:
                        if self.delay > 0:
                            await asyncio.sleep(self.delay)
                        self.record(body, request)
                        tokens = sum(len(str(m.get("content", ""))) for m in request.get("messages") or [] if isinstance(m, dict)) // 4
                        if self.n_ctx is not None and tokens > self.n_ctx:
                            error = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                                               "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": self.n_ctx}}
                            out = response(400, json.dumps(error).encode(), close)
                        else:
                            out = response(200, completion_body(str(request.get("model", "fake"))), close)
                else:
                    out = response(404, b'{"error":{"message":"not found"}}', close)
                writer.write(out)
                await writer.drain()
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            writer.close()


async def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    p.add_argument("--delay-ms", type=float, default=20.0, help="delay before each completion")
    p.add_argument("--log", help="append one JSON line per completion to this file")
    p.add_argument("--n-ctx", type=int, help="answer prompts over this many tokens with llama.cpp's context-size 400")
    a = p.parse_args()
    log = open(a.log, "a", encoding="utf-8") if a.log else None
    checker = Checker(a.delay_ms / 1000.0, log, a.n_ctx)
    server = await asyncio.start_server(checker.handle, "127.0.0.1", a.port, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
