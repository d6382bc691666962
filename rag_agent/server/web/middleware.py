"""ASGI middleware around the whole server: CORS for the configured origins, rate and size limits."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_agent.server import visitors
from rag_agent.server.auth import parse_api_keys
from rag_agent.server.web import limits
from tools.settings import get_settings

# Where runs start (each costs a turn) and where visitor tokens are issued.
RUN_PATH = re.compile(r"^/(?:threads/[^/]+/)?runs(?:/stream|/wait|/batch)?/?$")
TOKEN_PATH = "/widget/token"
THREADS_PATH = "/threads"  # creating threads costs storage: counted per IP
MCP_PATH = "/mcp"  # each tools/call starts a run: counted like one
_EXPOSED = "content-location, x-pagination-total, x-pagination-next, retry-after"


def _literal_host(host: str) -> bool:
    """Tell whether a host is an IP literal or localhost, names no DNS rebinding can point elsewhere."""
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


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

    def _allowed(self, origin: str, scope: Scope, headers: Headers) -> bool:
        if "*" in self.origins or origin in self.origins:
            return True
        # The server's own pages (the demo) call it from its own origin. Only an IP literal or localhost counts
        # as "own" unlisted: a DNS name in Host may be an attacker's rebound to this server (DNS rebinding), and
        # scheme and port must match too. Serve the demo under a name? List that origin.
        host = (headers.get("host") or "").lower()
        own = f"{scope.get('scheme', 'http')}://{host}"
        return origin == own and _literal_host(urlsplit(own).hostname or "")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer preflights, refuse foreign origins, and set CORS headers for allowed ones."""
        if scope["type"] != "http" or "origin" not in (headers := Headers(scope=scope)):
            await self.app(scope, receive, send)
            return
        origin = headers["origin"].rstrip("/").lower()
        if not self._allowed(origin, scope, headers):
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


def _hosts(forwarded: str) -> set[str]:
    """Return the hosts named in an X-Forwarded-For value, ports and IPv6 brackets dropped."""
    hosts = set()
    for entry in (e.strip() for e in forwarded.split(",")):
        if entry.startswith("["):
            hosts.add(entry[1:].partition("]")[0])
        else:
            hosts.add(entry.rpartition(":")[0] if entry.count(":") == 1 else entry)
    return hosts


async def read_body(receive: Receive, limit: int | None = None) -> bytes | None:
    """Read a whole request body; None when the client left. Stops once past `limit` bytes (the caller checks)."""
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if limit is not None and len(body) > limit:
            break
    return body


def replay(body: bytes, receive: Receive) -> Receive:
    """Return a receive callable that hands on a body already read, then the client's later messages."""
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def mcp_call(body: bytes) -> tuple[bool, Any]:
    """Tell whether an MCP request body calls a tool (and so starts a run); return it with the request id."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False, None
    messages = message if isinstance(message, list) else [message]
    calls = [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
    return bool(calls), calls[0].get("id") if calls else None


class Guard:
    """Rate limits per visitor and per IP on starting runs (MCP tool calls too) and getting tokens; a body cap."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        settings = get_settings()
        self.visitor_rate, self.ip_rate = limits.visitor_rate(), limits.ip_rate()
        self.max_body, self.trust_proxy = settings.max_body_bytes, settings.trust_proxy
        self.by_visitor, self.by_ip = limits.window("visitor"), limits.window("ip")

    def _client_ip(self, scope: Scope, headers: Headers) -> str:
        """Return the key the per-IP limit counts: the socket peer unless RAG_AGENT_TRUST_PROXY is set."""
        forwarded = ", ".join(headers.getlist("x-forwarded-for"))
        client = scope.get("client")
        peer = str(client[0]) if client else "unknown"
        if self.trust_proxy and forwarded.strip():
            # The right-most entry is what the nearest proxy saw; entries to its left are the client's to invent.
            return forwarded.split(",")[-1].strip() or peer
        if forwarded and peer in _hosts(forwarded):
            # uvicorn replaced the socket peer (a proxy it trusts, 127.0.0.1 by default) with a client-chosen
            # X-Forwarded-For value. Not trusted here: every such request counts against the proxy itself.
            return "forwarded-by-proxy"
        return peer

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
        if (scope["type"] != "http" or scope["method"] not in {"POST", "PUT", "PATCH"}
                or str(scope.get("root_path", "")).startswith("/noauth")):  # the server's own in-process calls
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
        body = await read_body(receive, self.max_body)
        if body is None:
            return
        if len(body) > self.max_body:
            await respond(send, 413, {"detail": f"That message is too long ({len(body) // 1024}+ KB; the limit "
                                                f"is {self.max_body // 1024} KB). Please shorten it."})
            return
        if path == MCP_PATH:
            calls, request_id = mcp_call(body)
            wait = self._wait(scope, headers, per_visitor=True) if calls else 0.0
            if wait:  # a JSON-RPC error an MCP client shows, with the HTTP status a proxy understands
                message = limits.slow_down(wait)
                await respond(send, 429, {"jsonrpc": "2.0", "id": request_id, "detail": message,
                                          "error": {"code": -32000, "message": message}},
                              {"retry-after": str(max(1, round(wait)))})
                return
        await self.app(scope, replay(body, receive), send)
