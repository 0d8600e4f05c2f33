#!/usr/bin/env python3
"""For scripts/bench-overhead's portcullis-jwt target: makes an RSA key, writes its public half as
a JWKS to argv[1], and prints an RS256 JWT for agent `bench` (issuer bench-issuer, audience
portcullis-bench, valid for two hours)."""
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pub = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
pub.update(kid="bench-1", alg="RS256", use="sig")
with open(sys.argv[1], "w") as f:
    json.dump({"keys": [pub]}, f)
claims = {"iss": "bench-issuer", "aud": "portcullis-bench", "sub": "bench", "exp": int(time.time()) + 7200}
print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench-1"}))
