"""Who may use what on the server, in one place: the visitor allow-list and the admin-only parts.

Anonymous visitors (the widget's signed tokens) may use only the (method, route) pairs in `VISITOR_ROUTES`,
with only the body fields in `VISITOR_BODIES`, the stream modes in `VISITOR_STREAM_MODES` and the input
fields in `VISITOR_INPUT`; everything else is refused with 403 naming what is not allowed. Named users who are
not admins may use the whole API on what they own, except the `ADMIN_ONLY_ROUTES` and the
`ADMIN_STREAM_MODES` (they carry prompts and raw model output). Nobody's webhook may point at a private,
loopback, link-local or otherwise non-global address. rag_agent/server/web/surface.py enforces this at the HTTP
layer; rag_agent/server/auth.py checks runs again where the server hands them to the auth handlers.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from typing import Any
from urllib.parse import urlsplit

from langgraph_sdk import Auth

# (method, route) -> why the widget needs it. HEAD counts as GET. Anything not listed is refused for visitors.
VISITOR_ROUTES: dict[tuple[str, str], str] = {
    ("POST", "/threads"): "start a conversation",
    ("GET", "/threads/{thread_id}"): "read one of their own conversations",
    ("GET", "/threads/{thread_id}/state"): "restore their conversation when the page reloads",
    ("POST", "/threads/search"): "list their own conversations",
    ("POST", "/threads/{thread_id}/runs/stream"): "ask a question and stream the answer",
    ("POST", "/widget/token"): "get or renew a visitor token",
    ("POST", "/widget/feedback"): "rate one of their answers",
    ("GET", "/widget/feedback"): "read back their rating",
    ("GET", "/widget/{name}"): "the widget's script and style",
    ("GET", "/demo"): "the demo site",
    ("GET", "/demo/{path:path}"): "the demo site's pages",
    ("GET", "/ok"): "health check",
    ("GET", "/"): "health check",
}
# The body fields a visitor may send to each route that takes a JSON body from them.
VISITOR_BODIES: dict[tuple[str, str], frozenset[str]] = {
    ("POST", "/threads"): frozenset({"metadata"}),
    ("POST", "/threads/search"): frozenset({"limit", "offset"}),
    ("POST", "/threads/{thread_id}/runs/stream"): frozenset({"assistant_id", "input", "stream_mode"}),
}
# The graphs a visitor may run: the agent, never the indexer.
VISITOR_ASSISTANTS = frozenset({"agent"})
# `values` (the state the widget restores from) and `custom` (the cleaned answer as it streams).
VISITOR_STREAM_MODES = frozenset({"values", "custom"})
# Input fields the widget sends; anything else is refused rather than handed to the graph.
VISITOR_INPUT = frozenset({"messages", "context", "page_url", "filters"})
# Stream modes that carry the prompts and the model's raw output: admins only.
ADMIN_STREAM_MODES = frozenset({"events", "debug"})
# Routes only admins may use, whatever they own: the in-memory server's test and deploy hooks, profiling,
# and the v2 event-streaming protocol (its events include model calls, prompts and raw output).
ADMIN_ONLY_ROUTES: tuple[str, ...] = ("/internal/{rest:path}", "/deploy", "/deploy/{rest:path}", "/profile",
                                      "/threads/{thread_id}/stream/events", "/threads/{thread_id}/commands",
                                      "/threads/{thread_id}/runs/{run_id}/protocol")
# Run options as the auth handler sees them (the server fills in every key): any other key is refused.
VISITOR_RUN_KEYS = frozenset({"input", "stream_mode", "stream_subgraphs", "stream_resumable", "subgraphs",
                              "resumable", "on_disconnect", "feedback_keys", "temporary", "multitask_strategy",
                              "if_not_exists", "durability", "webhook", "interrupt_before", "interrupt_after",
                              "checkpoint_during", "on_completion", "after_seconds", "checkpoint", "checkpoint_id",
                              "command", "metadata", "config", "context", "assistant_id"})
# What a visitor may do to their own threads through the auth handlers: no state writes, copies or deletes.
VISITOR_THREAD_ACTIONS = frozenset({"create", "read", "search", "create_run"})


def _pattern(route: str) -> re.Pattern[str]:
    """Compile a route template (`{name}` one segment, `{name:path}` the rest) to a full-match regex."""
    out, last = "", 0
    for found in re.finditer(r"\{(\w+)(:path)?\}", route):
        out += re.escape(route[last:found.start()]) + (".*" if found.group(2) else "[^/]+")
        last = found.end()
    return re.compile(out + re.escape(route[last:]))


_VISITOR = [(method, route, _pattern(route)) for method, route in VISITOR_ROUTES]
_ADMIN_ONLY = [_pattern(route) for route in ADMIN_ONLY_ROUTES]


def is_visitor(identity: str) -> bool:
    """Tell an anonymous visitor's identity from a named user's."""
    return identity.startswith("visitor:")


def visitor_route(method: str, path: str) -> tuple[str, str] | None:
    """Return the allow-listed (method, route) a visitor's request matches, or None when it is not allowed."""
    method = "GET" if method == "HEAD" else method
    path = path.rstrip("/") or "/"
    return next(((m, r) for m, r, p in _VISITOR if m == method and p.fullmatch(path)), None)


def admin_only(path: str) -> bool:
    """Tell whether a path is one of the routes only admins may use."""
    path = path.rstrip("/") or "/"
    return any(p.fullmatch(path) for p in _ADMIN_ONLY)


def stream_modes(value: Any) -> set[str]:
    """Return the stream modes a run asks for (a string, a list of them, or nothing)."""
    if value is None:
        return set()
    return {str(m) for m in value} if isinstance(value, list | tuple) else {str(value)}


def visitor_body_problem(route: tuple[str, str], body: Any) -> str | None:
    """Return why a visitor's body for an allow-listed route is refused, or None when it is fine."""
    allowed = VISITOR_BODIES.get(route)
    if allowed is None or body is None:
        return None
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    extra = sorted(set(body) - allowed)
    if extra:
        return (f"visitors may not set {', '.join(extra)} on {route[0]} {route[1]}; "
                f"allowed: {', '.join(sorted(allowed)) or 'nothing'}")
    if "assistant_id" in body and body["assistant_id"] not in VISITOR_ASSISTANTS:
        return f"visitors may only run {', '.join(sorted(VISITOR_ASSISTANTS))}"
    modes = stream_modes(body.get("stream_mode"))
    if modes - VISITOR_STREAM_MODES:
        return (f"visitors may not use stream_mode {', '.join(sorted(modes - VISITOR_STREAM_MODES))}; "
                f"allowed: {', '.join(sorted(VISITOR_STREAM_MODES))}")
    if "input" in body:
        return _input_problem(body["input"])
    return None


def _input_problem(payload: Any) -> str | None:
    """Return why a visitor's run input is refused, or None."""
    if payload is None:
        return "visitors must send a question (input.messages); resuming an interrupted run is not allowed"
    if not isinstance(payload, dict):
        return "input must be an object with messages"
    extra = sorted(set(payload) - VISITOR_INPUT)
    if extra:
        return f"unknown input field(s) {', '.join(extra)}; send {', '.join(sorted(VISITOR_INPUT))}"
    messages = payload.get("messages") or []
    if not isinstance(messages, list) or len(messages) != 1:
        return "send exactly one new message per turn; the conversation is kept on the server"
    return None


def webhook_host_problem(url: str, addresses: list[str]) -> str | None:
    """Return why a webhook to `url`, whose host resolved to `addresses`, is refused; None when every one is global."""
    if not addresses:
        return f"webhook host of {url!r} does not resolve"
    for raw in addresses:
        address = ipaddress.ip_address(raw.split("%", 1)[0])  # drop an IPv6 zone id
        mapped = getattr(address, "ipv4_mapped", None) or address
        # is_global is False for private (10/8, 172.16/12, 192.168/16, fc00::/7), shared 100.64/10,
        # loopback, link-local, reserved and documentation ranges alike.
        if not mapped.is_global or mapped.is_multicast:
            return f"webhook {url!r} points at a non-public address ({address}); only public hosts are allowed"
    return None


def webhook_url_problem(url: Any) -> str | None:
    """Return why a webhook URL is refused before resolving it (scheme, host), or None."""
    if not isinstance(url, str):
        return "webhook must be a URL string"
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return f"webhook {url!r} must be an absolute http(s) URL"
    return None


async def resolve(host: str, port: int) -> list[str]:
    """Return the addresses a host name resolves to (an IP literal resolves to itself)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


async def webhook_problem(url: Any) -> str | None:
    """Return why a webhook URL is refused (not http(s), or a host resolving to a non-public address), or None."""
    problem = webhook_url_problem(url)
    if problem:
        return problem
    parts = urlsplit(str(url))
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"webhook {url!r} has an invalid port"
    return webhook_host_problem(str(url), await resolve(parts.hostname or "", port))


def _refuse(status: int, detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=status, detail=detail)


def check(resource: str, action: str, value: dict[str, Any]) -> None:
    """Raise 403/400 for what a visitor may not do; their threads are owner-scoped elsewhere."""
    if resource != "threads":
        raise _refuse(403, f"visitors may only use their own conversations, not {resource}")
    if action not in VISITOR_THREAD_ACTIONS:
        raise _refuse(403, f"visitors may not {action} conversations (no state writes, copies or deletes)")
    if action == "create_run":
        check_run(value.get("kwargs") or {})


def check_run(kwargs: dict[str, Any]) -> None:
    """Refuse run settings, config overrides, commands, interrupts, webhooks and unknown input from a visitor."""
    unknown = sorted(set(kwargs) - VISITOR_RUN_KEYS)
    if unknown:
        raise _refuse(400, f"visitors cannot set {', '.join(unknown)}")
    if kwargs.get("context"):
        raise _refuse(403, "visitors cannot change the agent's settings (context); the deployment sets them")
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    # The server puts its own ids (thread, run, assistant, user) here; nothing a visitor sends is needed.
    foreign = sorted(k for k in configurable if not k.startswith(("thread_id", "run_id", "assistant_id", "graph_id",
                                                                   "user_id", "langgraph_", "__", "checkpoint")))
    if foreign:
        raise _refuse(403, f"visitors cannot set config.configurable {', '.join(foreign)}")
    if kwargs.get("command"):
        raise _refuse(403, "visitors cannot send commands to the graph")
    for key in ("webhook", "interrupt_before", "interrupt_after", "checkpoint", "checkpoint_id"):
        if kwargs.get(key):
            raise _refuse(403, f"visitors cannot set {key}")
    modes = stream_modes(kwargs.get("stream_mode")) - VISITOR_STREAM_MODES
    if modes:
        raise _refuse(403, f"visitors may not use stream_mode {', '.join(sorted(modes))}")
    if "input" in kwargs:
        problem = _input_problem(kwargs.get("input"))
        if problem:
            raise _refuse(400, problem)
