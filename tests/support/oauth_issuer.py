"""An OAuth authorization server's public face, served over real HTTP on 127.0.0.1.

`FakeIssuer` makes RSA (RS256) and EC P-256 (ES256) keys with `cryptography`, publishes the ones
asked for as a JWKS at `/jwks`, names that JWKS in its RFC 8414 metadata
(`/.well-known/oauth-authorization-server`), counts every request by path, and signs access
tokens with any of its keys (published or not), so tests can rotate keys and forge bad ones.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

__all__ = ["AUDIENCE", "FakeIssuer"]

AUDIENCE = "https://biomcp.test/mcp"
JWKS_PATH = "/jwks"
METADATA_PATH = "/.well-known/oauth-authorization-server"

Algorithm = Literal["RS256", "ES256"]


class FakeIssuer:
    """Keys, metadata and a JWKS on 127.0.0.1; use as a context manager."""

    def __init__(self) -> None:
        self._private: dict[str, tuple[Algorithm, Any]] = {}
        self._published: list[str] = []
        self.hits: Counter[str] = Counter()
        #: Bytes of padding appended to the JWKS document (to test the size bound).
        self.jwks_padding = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeIssuer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def issuer(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def jwks_url(self) -> str:
        return self.issuer + JWKS_PATH

    @property
    def jwks_fetches(self) -> int:
        with self._lock:
            return self.hits[JWKS_PATH]

    # --- keys ----------------------------------------------------------------------------------

    def make_key(self, kid: str, algorithm: Algorithm) -> str:
        """A new private key named `kid` (not published yet)."""
        if algorithm == "RS256":
            key: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            key = ec.generate_private_key(ec.SECP256R1())
        self._private[kid] = (algorithm, key)
        return kid

    def publish(self, *kids: str) -> None:
        """Serve exactly these keys' public halves from now on (a rotation)."""
        with self._lock:
            self._published = list(kids)

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            kids = list(self._published)
        keys = []
        for kid in kids:
            algorithm, private = self._private[kid]
            codec = RSAAlgorithm if algorithm == "RS256" else ECAlgorithm
            jwk = codec.to_jwk(private.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": algorithm})
        return {"keys": keys}

    # --- tokens --------------------------------------------------------------------------------

    def token(
        self, kid: str, *, scope: str = "biomcp:read", drop: tuple[str, ...] = (), **claims: Any
    ) -> str:
        """An access token signed by `kid`: valid for 10 minutes for `AUDIENCE` unless
        `claims` override it; `drop` removes claims."""
        algorithm, private = self._private[kid]
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": "user-1",
            "client_id": "test-client",
            "iat": now,
            "exp": now + 600,
            "scope": scope,
        }
        payload.update(claims)
        for name in drop:
            payload.pop(name, None)
        return jwt.encode(payload, private, algorithm=algorithm, headers={"kid": kid})

    # --- HTTP ----------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with issuer._lock:
                    issuer.hits[path] += 1
                if path == METADATA_PATH:
                    self._json({"issuer": issuer.issuer, "jwks_uri": issuer.jwks_url})
                elif path == JWKS_PATH:
                    self._json(issuer.jwks(), padding=issuer.jwks_padding)
                else:
                    self._json({"error": "not_found"}, status=404)

            def _json(self, body: dict[str, Any], *, status: int = 200, padding: int = 0) -> None:
                data = json.dumps(body).encode() + b" " * padding
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        return Handler
