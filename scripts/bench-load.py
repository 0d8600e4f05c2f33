#!/usr/bin/env python3
"""bench-load: exactly N HTTP/1.1 keep-alive POSTs over C connections, every answer checked.

Used by scripts/bench-features, which counts what a proxy spends per request (instructions,
syscalls, allocations) and so needs a fixed number of requests, not a fixed time: wrk runs for a
duration. Each connection sends its next request only after the previous answer was read whole
(no pipelining), so C is the number of requests in flight. Every answer must be 200 with the
expected body, or the run fails (exit 1) naming the first bad one. 127.0.0.1 only.

usage: bench-load.py URL N [--conns C] [--body B] [--expect E] [--header 'K: V' ...]
"""

import argparse
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit


def request_bytes(path, host, body, headers):
    head = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(body)}"]
    head += headers
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Conn:
    """One keep-alive connection: sends, then reads one answer (Content-Length framed)."""

    def __init__(self, addr, req):
        self.sock = socket.create_connection(addr)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.req = req
        self.buf = b""

    def send(self):
        self.sock.sendall(self.req)
        self.buf = b""

    def answer(self):
        """(status, body) once a whole answer is buffered, else None."""
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buf[:end].decode("latin-1").split("\r\n")
        status = int(head[0].split(" ")[1])
        length = None
        for line in head[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
            if k.strip().lower() == "transfer-encoding":
                raise SystemExit(f"bench-load: chunked answer not supported: {head}")
        if length is None:
            raise SystemExit(f"bench-load: answer without Content-Length: {head}")
        if len(self.buf) < end + 4 + length:
            return None
        body = self.buf[end + 4:end + 4 + length]
        self.buf = self.buf[end + 4 + length:]
        return status, body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("n", type=int)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--body", default='{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                    '"params":{"name":"echo","arguments":{"message":"hi"}}}')
    ap.add_argument("--expect", default=None, help="the exact body every answer must carry")
    ap.add_argument("--header", action="append", default=[])
    a = ap.parse_args()
    u = urlsplit(a.url)
    if u.hostname != "127.0.0.1":
        raise SystemExit("bench-load: 127.0.0.1 only")
    req = request_bytes(u.path or "/", u.netloc, a.body.encode(), a.header)
    expect = a.expect.encode() if a.expect is not None else None
    sel = selectors.DefaultSelector()
    conns = [Conn((u.hostname, u.port), req) for _ in range(min(a.conns, a.n))]
    sent = done = 0
    t0 = time.monotonic()
    for c in conns:
        c.send()
        sent += 1
        sel.register(c.sock, selectors.EVENT_READ, c)
    while done < a.n:
        ready = sel.select(timeout=120)
        if not ready:
            raise SystemExit(f"bench-load: no answer for 120 s after {done} answers")
        for key, _ in ready:
            c = key.data
            chunk = c.sock.recv(65536)
            if not chunk:
                raise SystemExit(f"bench-load: connection closed after {done} answers")
            c.buf += chunk
            while (got := c.answer()) is not None:
                status, body = got
                if status != 200 or (expect is not None and body != expect):
                    raise SystemExit(f"bench-load: answer {done + 1}: HTTP {status}: {body[:300]!r}")
                done += 1
                if sent < a.n:
                    c.send()
                    sent += 1
                else:
                    break
    dt = time.monotonic() - t0
    for c in conns:
        c.sock.close()
    print(f"bench-load: {done} answers in {dt:.2f}s over {len(conns)} connection(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
