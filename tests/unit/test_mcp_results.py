"""MCP tool replies are reshaped into small JSON structured content; a failed run is a tool error, not a 500."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from rag_agent.server.web.mcp import McpResults

STATE = {"messages": [{"type": "human", "content": "q"}, {"type": "ai", "content": "A [1]."}], "status": "grounded",
         "answer": "A [1].", "retrieved": [{"text": "x" * 5000}] * 5, "confidence": 0.8, "not_found": None,
         "error": None, "citations": [{"index": 1, "title": "Setup", "heading_hierarchy": ["Install", "Linux"],
                                       "source_url": "https://d.example/setup#linux", "text": "y" * 900}]}


def _app(reply: Any, status: int = 200) -> TestClient:
    async def mcp(request: Request) -> Response:
        if status >= 500:
            return Response("Internal Server Error", status_code=status)
        return JSONResponse(reply, status_code=status)

    app = Starlette(routes=[Route("/mcp", mcp, methods=["POST"])], middleware=[Middleware(McpResults)])
    return TestClient(app, raise_server_exceptions=False)


def _call(client: TestClient) -> Any:
    return client.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                     "params": {"name": "ask_docs", "arguments": {}}})


def test_the_run_state_becomes_structured_content_and_a_short_text() -> None:
    client = _app({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": repr(STATE)}]}})
    reply = _call(client)
    result = reply.json()["result"]
    assert reply.status_code == 200 and result["isError"] is False
    assert result["structuredContent"]["citations"] == [
        {"index": 1, "title": "Setup › Linux", "url": "https://d.example/setup#linux", "quote": "y" * 239 + "…"}]
    assert result["content"][0]["text"] == "A [1].\n\nSources:\n[1] Setup › Linux — https://d.example/setup#linux"
    assert len(reply.content) < 2048  # the five 5 KB chunks are gone


def test_a_server_error_on_a_tool_call_is_a_tool_error_with_the_request_id() -> None:
    client = _app(None, status=500)
    reply = _call(client)
    assert reply.status_code == 200
    assert reply.json() == {"jsonrpc": "2.0", "id": 7, "result": {
        "content": [{"type": "text", "text": "The documentation assistant could not run this call."}], "isError": True}}


def test_other_mcp_messages_pass_untouched() -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    client = _app(listing)
    reply = client.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert reply.json() == listing
