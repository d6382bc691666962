"""ASGI middleware that applies rag_agent/server/visitor_policy.py to every request the server receives.

Visitors reach only the allow-listed routes with allow-listed body fields; named users who are not admins
are kept off the admin-only routes and stream modes; every webhook must resolve to public addresses only.
Requests the server makes to itself (root path `/noauth`, which no client can set) are not checked again.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from rag_agent.server import visitor_policy as policy
from rag_agent.server import visitors
from rag_agent.server.auth import is_admin, parse_api_keys
from rag_agent.server.web.middleware import read_body, replay, respond
from tools.settings import get_settings

VISITOR, USER, ADMIN = "visitor", "user", "admin"
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def role(authorization: str | None) -> str:
    """Return who a request's bearer token makes the caller: a visitor, an admin, or another user."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip() if scheme.lower() == "bearer" else ""
    if visitors.looks_like_visitor_token(token):
        return VISITOR  # forged or expired ones too: the auth handler answers 401, and they are never more
    settings = get_settings()
    keys = parse_api_keys(settings.api_keys.get_secret_value())
    if not keys:
        return ADMIN  # no keys: everyone is `local`, the developer's own server (graph/indexer.py agrees)
    user = keys.get(token)
    return ADMIN if user is not None and is_admin(user) else USER


def _bodies(body: Any) -> list[dict[str, Any]]:
    """Return the run payloads in a body: the object itself, or each object of a batch."""
    if isinstance(body, dict):
        return [body]
    return [item for item in body if isinstance(item, dict)] if isinstance(body, list) else []


class SurfaceGate:
    """Refuse with 403 (and a message naming what) whatever visitor_policy does not allow the caller."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the route, the query and the JSON body against the caller's role, then pass the request on."""
        if scope["type"] not in {"http", "websocket"} or str(scope.get("root_path", "")).startswith("/noauth"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        who, path = role(headers.get("authorization")), scope["path"]
        if scope["type"] == "websocket":
            if who != ADMIN:  # closing before accepting answers the handshake with 403
                await send({"type": "websocket.close", "code": 1008, "reason": "websockets are for admins only"})
                return
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method == "OPTIONS":  # CORS preflights are answered by OriginGate
            await self.app(scope, receive, send)
            return
        route = policy.visitor_route(method, path) if who == VISITOR else None
        if who == VISITOR and route is None:
            await self._refuse(send, path, f"visitors may not use {method} {path}; the widget's routes are "
                                           f"{', '.join(f'{m} {r}' for m, r in policy.VISITOR_ROUTES)}")
            return
        if who == USER and policy.admin_only(path):
            await self._refuse(send, path, f"{method} {path} is for admins only (RAG_AGENT_ADMINS)")
            return
        modes = policy.stream_modes(parse_qs(scope.get("query_string", b"").decode("latin-1")).get("stream_mode"))
        if who != ADMIN and modes & policy.ADMIN_STREAM_MODES:
            await self._refuse(send, path, self._modes_message(modes))
            return
        if method not in _BODY_METHODS or path.startswith(("/widget/", "/mcp", "/demo")):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        if raw is None:
            return
        problem = await self._body_problem(who, route, raw)
        if problem:
            status, detail = problem
            await respond(send, status, {"detail": detail})
            return
        await self.app(scope, replay(raw, receive), send)

    async def _body_problem(self, who: str, route: tuple[str, str] | None, raw: bytes) -> tuple[int, str] | None:
        """Return (status, message) when the JSON body holds something the caller may not send."""
        if not raw.strip():
            return None
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return 400, "the request body is not valid JSON (or is nested too deeply)"
        if who == VISITOR and route is not None:
            problem = policy.visitor_body_problem(route, body)
            if problem:
                return 403, problem
        for payload in _bodies(body):
            modes = policy.stream_modes(payload.get("stream_mode"))
            if who != ADMIN and modes & policy.ADMIN_STREAM_MODES:
                return 403, self._modes_message(modes)
            if payload.get("webhook") is not None:
                problem = await policy.webhook_problem(payload["webhook"])
                if problem:
                    return 403, problem
        return None

    @staticmethod
    def _modes_message(modes: set[str]) -> str:
        refused = ", ".join(sorted(modes & policy.ADMIN_STREAM_MODES))
        return (f"stream_mode {refused} is for admins only: it carries the prompts and the model's raw output; "
                "use values, updates, messages or custom")

    @staticmethod
    async def _refuse(send: Send, path: str, detail: str) -> None:
        body: dict[str, Any] = {"detail": detail}
        if path.rstrip("/") == "/mcp":  # an MCP client shows a JSON-RPC error, not a bare HTTP failure
            body |= {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": detail}}
        await respond(send, 403, body)

