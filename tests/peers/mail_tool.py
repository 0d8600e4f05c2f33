#!/usr/bin/env python3
"""A plain HTTP mail tool for red team round 10: POST /send {"to", "body"} builds an
`email.message.EmailMessage` with `To: <to>` and sends it with `smtplib.SMTP.send_message`, which
takes the recipients from the header as the standard library reads it (`email.utils.getaddresses`),
to a relay in this same process that accepts everything and delivers nothing.

    mail_tool.py        prints `LISTENING <port>` (the HTTP tool; the relay has a port of its own)

Answers {"sent": true, "recipients": [...]} or {"error": ...}. If env PEER_JOURNAL names a file,
one JSON line per tool run (kind "tool", with `to` as received) and one per `RCPT TO` the relay
accepted (kind "rcpt", with the address as the client sent it) are appended.
"""

from __future__ import annotations

import json
import os
import smtplib
import socketserver
import threading
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOCK = threading.Lock()


def journal(record: dict[str, Any]) -> None:
    path = os.environ.get("PEER_JOURNAL")
    if path:
        with LOCK, open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


class Relay(socketserver.StreamRequestHandler):
    """Just enough SMTP for smtplib: every command is accepted, RCPT TO is journaled."""

    def handle(self) -> None:
        self.wfile.write(b"220 relay ready\r\n")
        data = False
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if data:
                if line == ".":
                    data = False
                    self.wfile.write(b"250 queued\r\n")
                continue
            verb = line[:4].upper()
            if verb in ("EHLO", "HELO"):
                self.wfile.write(b"250 relay\r\n")
            elif verb == "RCPT":
                addr = line.split(":", 1)[1].strip() if ":" in line else line
                journal({"kind": "rcpt", "rcpt": addr.removeprefix("<").removesuffix(">")})
                self.wfile.write(b"250 ok\r\n")
            elif verb == "DATA":
                data = True
                self.wfile.write(b"354 go on\r\n")
            elif verb == "QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


class Tool(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            args = json.loads(raw)
            journal({"kind": "tool", "tool": self.path, "to": args.get("to")})
            msg = EmailMessage()
            msg["From"] = "agent@tools.example"
            msg["To"] = args["to"]
            msg["Subject"] = "from the agent"
            msg.set_content(str(args.get("body", "")))
            with smtplib.SMTP("127.0.0.1", RELAY_PORT, timeout=10) as smtp:
                refused = smtp.send_message(msg)
            answer = {"sent": True, "refused": list(refused)}
        except Exception as e:  # the test reads the outcome
            answer = {"error": f"{type(e).__name__}: {e}"}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


RELAY_PORT = 0


def main() -> None:
    global RELAY_PORT
    relay = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Relay)
    relay.daemon_threads = True
    RELAY_PORT = relay.server_address[1]
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Tool)
    server.daemon_threads = True
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
