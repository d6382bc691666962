"""ASGI middleware around the whole server: CORS for the configured origins, rate and size limits."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_agent import visitors
from rag_agent.auth import parse_api_keys
from rag_agent.web import limits
from tools.settings import get_settings

# Where runs start (each costs a turn) and where visitor tokens are issued.
RUN_PATH = re.compile(r"^/(?:threads/[^/]+/)?runs(?:/stream|/wait|/batch)?/?$")
TOKEN_PATH = "/widget/token"
THREADS_PATH = "/threads"  # creating threads costs storage: counted per IP
_EXPOSED = "content-location, x-pagination-total, x-pagination-next, retry-after"


def allowed_origins() -> frozenset[str]:
    """Return the origins (scheme://host[:port]) allowed to call the server from a browser."""
    # The default is LangGraph Studio's origin; a deployment that sets the variable lists it if wanted.
    raw = get_settings().allowed_origins
    return frozenset(o.strip().rstrip("/").lower() for o in raw.split(",") if o.strip())


async def respond(send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    """Send a small JSON response."""
    data = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


class OriginGate:
    """CORS with an allow-list: other origins get no CORS headers (the browser blocks them) and a 403."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.origins = app, allowed_origins()

    def _allowed(self, origin: str, headers: Headers) -> bool:
        host = origin.split("://", 1)[-1]
        return "*" in self.origins or origin in self.origins or host == (headers.get("host") or "").lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer preflights, refuse foreign origins, and set CORS headers for allowed ones."""
        if scope["type"] != "http" or "origin" not in (headers := Headers(scope=scope)):
            await self.app(scope, receive, send)
            return
        origin = headers["origin"].rstrip("/").lower()
        if not self._allowed(origin, headers):
            await respond(send, 403, {"detail": f"origin {origin} is not allowed; add it to RAG_AGENT_ALLOWED_ORIGINS"})
            return
        cors = {"access-control-allow-origin": headers["origin"], "vary": "Origin",
                "access-control-expose-headers": _EXPOSED}
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await respond(send, 200, {}, cors | {
                "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
                "access-control-allow-headers": headers.get("access-control-request-headers", "") or "*",
                "access-control-max-age": "600"})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for name in [k for k in out.keys() if k.startswith("access-control-")]:
                    del out[name]  # the server's own wildcard CORS must not widen the allow-list
                for name, value in cors.items():
                    out[name] = value
            await send(message)

        await self.app(scope, receive, send_with_cors)


class Guard:
    """Rate limits per visitor and per IP on starting runs and getting tokens; a cap on request bodies."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        settings = get_settings()
        self.visitor_rate, self.ip_rate = limits.visitor_rate(), limits.ip_rate()
        self.max_body, self.trust_proxy = settings.max_body_bytes, settings.trust_proxy
        self.by_visitor, self.by_ip = limits.window("visitor"), limits.window("ip")

    def _client_ip(self, scope: Scope, headers: Headers) -> str:
        forwarded = headers.get("x-forwarded-for", "") if self.trust_proxy else ""
        if forwarded:
            return forwarded.split(",")[0].strip()
        client = scope.get("client")
        return str(client[0]) if client else "unknown"

    def _wait(self, scope: Scope, headers: Headers, per_visitor: bool) -> float:
        """Count this request; return 0 when it may go on, else the seconds to wait."""
        token = headers.get("authorization", "").partition(" ")[2].strip()
        if token and token in parse_api_keys(get_settings().api_keys.get_secret_value()):
            return 0.0  # named users are internal tools, trusted with their own pace
        waits = [0.0]
        if self.ip_rate:
            waits.append(self.by_ip.hit(self._client_ip(scope, headers), self.ip_rate))
        visitor = visitors.verify(token) if visitors.looks_like_visitor_token(token) else None
        if visitor and per_visitor and self.visitor_rate and max(waits) == 0:
            waits.append(self.by_visitor.hit(visitor.visitor_id, self.visitor_rate))
        return max(waits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse over-limit requests with a friendly 429 and oversized bodies with a 413."""
        if scope["type"] != "http" or scope["method"] not in {"POST", "PUT", "PATCH"}:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path = scope["path"].rstrip("/") or "/"
        run = bool(RUN_PATH.match(scope["path"]))
        if run or path in {TOKEN_PATH, THREADS_PATH}:
            wait = await run_in_threadpool(self._wait, scope, headers, run)  # Redis limits do network I/O
            if wait:
                await respond(send, 429, {"detail": limits.slow_down(wait)}, {"retry-after": str(max(1, round(wait)))})
                return
        body, more = b"", True
        while more:  # read the body here (bounded), then hand it on whole
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await respond(send, 413, {"detail": f"That message is too long ({len(body) // 1024}+ KB; the limit "
                                                    f"is {self.max_body // 1024} KB). Please shorten it."})
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
