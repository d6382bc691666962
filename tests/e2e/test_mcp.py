"""The agent as an MCP tool: the official `mcp` client talks streamable HTTP to `langgraph dev`'s /mcp.

One server with owner-based auth on (`RAG_AGENT_API_KEYS`): a client sending a user's bearer token
lists the tools and gets a grounded answer with its sources; a client without a token is refused.
A second server with no keys configured answers a client that sends no token at all.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from langgraph_sdk import get_sync_client
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e import devserver

pytestmark = pytest.mark.e2e

TOKEN = "carol-token-3"
# The hash embedder's scores are lower than the real model's; this lets on-topic questions through.
CONTEXT = {"score_threshold": 0.2}
QUESTION = {"messages": [{"role": "user", "content": "How does Isaac Sim generate synthetic data?"}]}


def _start(tmp_path_factory: pytest.TempPathFactory, **env: str) -> Iterator[devserver.DevServer]:
    if not devserver.LANGGRAPH.exists():
        message = f"MCP end-to-end tests need {devserver.LANGGRAPH} (install the `server` extra)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    workdir = tmp_path_factory.mktemp("mcp")
    running = devserver.start(workdir, devserver.prepare(workdir, **env))
    try:
        # A tuned assistant is a tool of its own: the docs team names it and sets its context once.
        sdk = get_sync_client(url=running.url, api_key=None, timeout=60,
                              headers={"Authorization": f"Bearer {TOKEN}"} if env else {})
        sdk.assistants.create("agent", context=CONTEXT, name="ask_docs",
                              description="Answer a question from the indexed docs, with its sources.")
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devserver.DevServer]:
    yield from _start(tmp_path_factory, RAG_AGENT_API_KEYS=f"carol:{TOKEN}")


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devserver.DevServer]:
    yield from _start(tmp_path_factory)


async def _session(url: str, token: str | None, statuses: list[int] | None = None) -> tuple[list[Any], Any]:
    """List the tools and ask one question through the real MCP client; return (tools, call result)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    seen = statuses if statuses is not None else []

    async def record(response: httpx2.Response) -> None:
        seen.append(response.status_code)

    async with httpx2.AsyncClient(headers=headers, timeout=120, trust_env=False,
                                  event_hooks={"response": [record]}) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("ask_docs", QUESTION)
            return tools, result


def _check_grounded(tools: list[Any], result: Any) -> None:
    by_name = {tool.name: tool for tool in tools}
    # Every assistant is a tool: the server's own (named after the compiled graph) and the tuned `ask_docs`.
    assert {"ask_docs", "rag-agent"} <= set(by_name), sorted(by_name)
    assert "documentation" in (by_name["rag-agent"].description or ""), "langgraph.json's description is the tool's"
    assert by_name["ask_docs"].description == "Answer a question from the indexed docs, with its sources."
    assert "messages" in by_name["ask_docs"].input_schema["properties"]
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["status"] == "grounded" and "Replicator" in data["answer"]
    # The sources: the cited section of the page that answers, not the off-topic one, with the passage quoted.
    first = data["citations"][0]
    assert set(first) == {"index", "title", "url", "quote"} and first["index"] == 1
    assert "isaac-sim" in first["url"] and "Replicator" in first["quote"]
    assert data["not_found"] is None
    # The readable block says the same; the whole result is small enough for an assistant's context.
    text = "".join(block.text for block in result.content if block.type == "text")
    assert "Replicator" in text and "Sources:" in text and first["url"] in text
    assert "'status'" not in text and "None" not in text  # not a Python repr
    assert len(json.dumps(result.model_dump(by_alias=True, exclude_none=True))) < 2048


def test_token_holder_gets_a_grounded_answer_with_sources(secured: devserver.DevServer) -> None:
    tools, result = asyncio.run(_session(secured.url, TOKEN))
    _check_grounded(tools, result)


def test_client_without_token_is_refused(secured: devserver.DevServer) -> None:
    statuses: list[int] = []
    # The client surfaces the refusal as an error inside its task group; the HTTP status says why.
    with pytest.raises(ExceptionGroup):
        asyncio.run(_session(secured.url, None, statuses))
    assert statuses and statuses[0] == 401, statuses


def test_server_without_keys_answers_without_token(open_server: devserver.DevServer) -> None:
    tools, result = asyncio.run(_session(open_server.url, None))
    _check_grounded(tools, result)


async def _call(url: str, token: str | None, tool: str, arguments: dict[str, Any]) -> tuple[Any, list[int]]:
    """Call one tool through the real MCP client; return the result and the HTTP statuses seen."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    async with httpx2.AsyncClient(headers=headers, timeout=120, trust_env=False,
                                  event_hooks={"response": [record]}) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return await client.call_tool(tool, arguments), statuses


def test_an_unanswered_question_comes_back_with_its_reason_and_nearest_sections(secured: devserver.DevServer) -> None:
    result, _ = asyncio.run(_call(secured.url, TOKEN, "ask_docs",
                                  {"messages": [{"role": "user", "content": "What is the capital of France?"}]}))
    data = result.structured_content
    assert data["status"] == "not_found" and data["citations"] == []
    assert data["not_found"]["reason"] and data["not_found"]["nearest"]
    assert all(set(s) == {"title", "url"} for s in data["not_found"]["nearest"])
    assert "I don't have information about" in data["answer"]
    assert "Nearest sections:" in "".join(b.text for b in result.content if b.type == "text")


def test_a_refused_call_is_a_tool_error_not_an_http_500(secured: devserver.DevServer) -> None:
    # Not a question the agent accepts (nothing to ask): the graph refuses it with a clear message.
    result, statuses = asyncio.run(_call(secured.url, TOKEN, "ask_docs", {"messages": [{"role": "user",
                                                                                       "content": "   "}]}))
    assert result.is_error and result.structured_content["status"] == "error"
    assert result.structured_content["error"]["message"]
    # The indexer is for admins only: the run is refused before it starts; still a tool error.
    refused, more = asyncio.run(_call(secured.url, TOKEN, "indexer", {"source": "/etc"}))
    assert refused.is_error
    assert 500 not in statuses + more, statuses + more
