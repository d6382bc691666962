"""The server's API docs and metrics (`/docs`, `/openapi.json`, `/metrics`) need a token when auth is on."""

from __future__ import annotations

import hmac
import json
from typing import Any

from rag_agent.server.auth import parse_api_keys
from tools.settings import get_settings

PROTECTED = frozenset({"/docs", "/openapi.json", "/metrics"})
# Set to true to serve them without a token even when RAG_AGENT_API_KEYS is set (e.g. behind a private network).
PUBLIC_ENV = "RAG_AGENT_PUBLIC_META"

Scope = dict[str, Any]


def _bearer(scope: Scope) -> str:
    """Return the request's bearer token, or ''."""
    for name, value in scope.get("headers") or []:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


def allowed(scope: Scope) -> bool:
    """Tell whether a request may pass: not a protected path, auth off, public by setting, or a known token."""
    if scope.get("type") != "http" or scope.get("path", "").rstrip("/") not in PROTECTED:
        return True
    settings = get_settings()
    keys = parse_api_keys(settings.api_keys.get_secret_value())
    if not keys or settings.public_meta:
        return True
    token = _bearer(scope).encode()
    # Every key is compared in constant time, so timing does not reveal a prefix match.
    return bool(token) and sum(hmac.compare_digest(known.encode(), token) for known in keys) > 0


class MetaGuard:
    """ASGI middleware: answer 401 to an unauthenticated request for the API docs or metrics."""

    def __init__(self, app: Any) -> None:
        """Wrap the server's app."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on, or refuse it before it reaches the route."""
        if allowed(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": "send Authorization: Bearer <token> (API docs and metrics need a token; "
                                     f"{PUBLIC_ENV}=true serves them openly)"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})
