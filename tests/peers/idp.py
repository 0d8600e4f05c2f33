#!/usr/bin/env python3
"""A small identity provider for portcullis's JWT tests: it holds real private keys (RSA 2048
and Ed25519, from `cryptography`), publishes their public halves as a JWKS, and signs tokens
with PyJWT (both installed with the `mcp` package the peers pin).

    idp.py      prints `LISTENING <port>`; binds 127.0.0.1 only

    GET  /jwks.json          the public key set: {"keys": [JWK, ...]} (kid, alg, use=sig)
    POST /sign               {"claims": {...}, "kid": "rsa-1", "exp_in": 300, "headers": {...}}
                             -> {"token": "..."}; iss/aud/sub/exp come from claims, exp_in sets
                             exp (seconds from now, may be negative); kid picks the key (its alg)
    POST /sign_rogue         the same, signed by a key the JWKS does not hold, under kid
    POST /rotate             {"kid": "rsa-2", "alg": "RS256", "drop": ["rsa-1"]}: adds a new key,
                             drops the named ones from the published set
    POST /fail               {"on": true}: /jwks.json answers 503 (the provider is down)

If env PEER_JOURNAL names a file, one JSON line per request: {"kind":"http","method","path"}.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from jwt.algorithms import OKPAlgorithm, RSAAlgorithm

LOCK = threading.Lock()
KEYS: dict[str, tuple[str, object]] = {}  # kid -> (alg, private key)
PUBLISHED: list[str] = []
STATE = {"fail": False}


def new_key(alg: str):
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def add(kid: str, alg: str) -> None:
    KEYS[kid] = (alg, new_key(alg))
    PUBLISHED.append(kid)


def jwk(kid: str) -> dict:
    alg, key = KEYS[kid]
    algo = OKPAlgorithm if alg == "EdDSA" else RSAAlgorithm
    d = json.loads(algo.to_jwk(key.public_key()))
    d.update({"kid": kid, "alg": alg, "use": "sig"})
    return d


def journal(method: str, path: str) -> None:
    path_ = os.environ.get("PEER_JOURNAL")
    if path_:
        with open(path_, "a") as f:
            f.write(json.dumps({"kind": "http", "method": method, "path": path}) + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        journal("GET", self.path)
        if self.path != "/jwks.json":
            return self.reply(404, {"error": "not found"})
        with LOCK:
            if STATE["fail"]:
                return self.reply(503, {"error": "down"})
            return self.reply(200, {"keys": [jwk(k) for k in PUBLISHED]})

    def do_POST(self):
        journal("POST", self.path)
        n = int(self.headers.get("content-length") or 0)
        req = json.loads(self.rfile.read(n) or b"{}")
        with LOCK:
            if self.path in ("/sign", "/sign_rogue"):
                kid = req.get("kid", "rsa-1")
                alg, key = KEYS[kid]
                if self.path == "/sign_rogue":
                    key = new_key(alg)
                claims = dict(req.get("claims", {}))
                claims.setdefault("iat", int(time.time()))
                claims["exp"] = int(time.time()) + int(req.get("exp_in", 300))
                headers = {"kid": kid, **req.get("headers", {})}
                return self.reply(200, {"token": jwt.encode(claims, key, algorithm=alg, headers=headers)})
            if self.path == "/rotate":
                add(req["kid"], req.get("alg", "RS256"))
                for old in req.get("drop", []):
                    if old in PUBLISHED:
                        PUBLISHED.remove(old)
                return self.reply(200, {"published": PUBLISHED})
            if self.path == "/fail":
                STATE["fail"] = bool(req.get("on", True))
                return self.reply(200, STATE)
        return self.reply(404, {"error": "not found"})


def main() -> None:
    add("rsa-1", "RS256")
    add("ed-1", "EdDSA")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
