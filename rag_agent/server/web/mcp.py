"""MCP tool results an assistant can use: the answer, its status and citations as JSON, plus a short text.

The LangGraph server's /mcp returns a run's whole output state as one Python `repr` text block (6-8 KB of
retrieved chunks and scores) and answers a run that fails before it starts with HTTP 500. This middleware
rewrites each `tools/call` reply: `structuredContent` holds what a client needs (answer, status,
citations with title/url/quote, the not-found reason and nearest sections), a text block says the same for
a reader, and a failed or refused call is a tool error (`isError`) inside a normal JSON-RPC reply.
"""

from __future__ import annotations

import ast
import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_agent.server.web.middleware import MCP_PATH, mcp_call

log = logging.getLogger(__name__)
QUOTE = 240  # characters of each cited passage: enough to check the claim, small in a client's context
MAX_CITATIONS = 5
FAILED = "The documentation assistant could not run this call."


def _text(message: Any) -> str:
    """Return a serialized message's text (a string, or the text blocks of a list)."""
    content = message.get("content") if isinstance(message, dict) else ""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _section(chunk: dict[str, Any]) -> str:
    """Name a cited section as its link goes: page title › its own heading."""
    heading = [h for h in (chunk.get("heading_hierarchy") or [])[-1:] if h != chunk.get("title")]
    return " › ".join([str(chunk.get("title", "")), *heading])


def structured(values: dict[str, Any]) -> dict[str, Any]:
    """Keep from a turn's output state what an MCP client needs."""
    messages = values.get("messages") or []
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("type") == "ai"), None)
    answer = values.get("answer") or (_text(last) if last else "")
    citations = [{"index": c.get("index"), "title": _section(c), "url": c.get("source_url", ""),
                  "quote": _clip(c.get("text", ""), QUOTE)}
                 for c in (values.get("citations") or [])[:MAX_CITATIONS] if isinstance(c, dict)]
    found = values.get("not_found")
    not_found = None
    if isinstance(found, dict):
        not_found = {"reason": found.get("reason"),
                     "nearest": [{"title": s.get("title", ""), "url": s.get("source_url", "")}
                                 for s in found.get("nearest") or [] if isinstance(s, dict)]}
        # The reply's text lists the nearest sections too: they are in `nearest`, once.
        answer = "\n".join(line for line in answer.splitlines() if not line.startswith("- ")).strip()
    error = values.get("error")
    out: dict[str, Any] = {"status": values.get("status") or ("error" if error else "unknown"), "answer": answer,
                           "citations": citations, "confidence": values.get("confidence"), "not_found": not_found}
    if isinstance(error, dict):
        out["error"] = {"code": error.get("code"), "message": error.get("message")}
    if values.get("turn_id"):
        out["turn_id"] = values["turn_id"]
    return out


def readable(data: dict[str, Any]) -> str:
    """Say the structured result in a few lines of plain text."""
    lines = [data["answer"] or (data.get("error") or {}).get("message") or ""]
    if data["citations"]:
        lines += ["", "Sources:", *(f"[{c['index']}] {c['title']} — {c['url']}" for c in data["citations"])]
    if data["not_found"] and data["not_found"]["nearest"]:
        lines += ["", "Nearest sections:", *(f"- {s['title']} — {s['url']}" for s in data["not_found"]["nearest"])]
    return "\n".join(lines).strip()


def rewrite(reply: dict[str, Any]) -> dict[str, Any]:
    """Turn the server's `tools/call` reply into structured content, or a tool error; other replies pass."""
    result = reply.get("result")
    if not isinstance(result, dict):
        return reply  # a JSON-RPC error (unknown tool, bad params): already what a client expects
    text = "".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))
    if result.get("isError"):
        log.warning("MCP tool call failed: %s", text[:500])
        return reply | {"result": error_result(FAILED)}
    try:
        values = ast.literal_eval(text)  # the server's repr of the run's JSON output: plain literals only
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return reply
    if not isinstance(values, dict):
        return reply
    data = structured(values)
    failed = data["status"] == "error"
    return reply | {"result": {"content": [{"type": "text", "text": readable(data)}], "structuredContent": data,
                               "isError": failed}}


def error_result(message: str) -> dict[str, Any]:
    """Return a tool error: a client shows it to the model or the user instead of failing the session."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


class McpResults:
    """Rewrite `tools/call` replies on /mcp (see the module docstring); everything else passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request through; for a tools/call, buffer the reply and send it rewritten."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:  # the body is small (the size limit runs outside this middleware)
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        calls, request_id = mcp_call(body)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        if not calls:
            await self.app(scope, replay, send)
            return
        start: Message = {}
        parts: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))

        try:
            await self.app(scope, replay, capture)
            status = int(start.get("status", 500))
        except Exception:  # noqa: BLE001 - the run failed before answering: a tool error, never a 500
            log.exception("MCP tool call raised")
            status = 500
        payload = b"".join(parts)
        if status >= 500:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": error_result(FAILED)}
        elif status != 200:
            await self._send(send, start, payload)
            return
        else:
            try:
                reply = json.loads(payload)
            except ValueError:
                await self._send(send, start, payload)
                return
            if isinstance(reply, dict):
                reply = rewrite(reply)
        out = json.dumps(reply, ensure_ascii=False).encode()
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() not in (b"content-length", b"content-type")]
        await self._send(send, {"type": "http.response.start", "status": 200,
                                "headers": [*headers, (b"content-type", b"application/json"),
                                            (b"content-length", str(len(out)).encode())]}, out)

    @staticmethod
    async def _send(send: Send, start: Message, body: bytes) -> None:
        """Send a captured response as it was."""
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})
