"""The per-turn deadline: every call gets what is left of the turn, and a turn out of time says so."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.budget import DEADLINE_KEY
from graph.context import Context, SettingsError
from rag_agent.service import Agent
from tests.fakes import FakeChat
from tests.unit.test_durability import count_nodes
from tests.unit.test_streaming import shown
from tools.chat import load_client

BREAD_QUESTION = "How long should I knead bread dough?"


@pytest.mark.parametrize("value", [0, 0.5, 601])
def test_turn_timeout_is_validated(value: float) -> None:
    with pytest.raises(SettingsError, match="turn_timeout must be between 1 and 600"):
        Context(turn_timeout=value)


def test_a_turn_past_its_deadline_ends_in_the_error_handler(app: Any, make_context: Callable[..., Context]) -> None:
    config = {"configurable": {"thread_id": "late", DEADLINE_KEY: time.time() - 1}}
    state = app.invoke({"messages": [HumanMessage(BREAD_QUESTION)]}, config, context=make_context(turn_timeout=5))
    assert state["status"] == "error" and state["error"]["code"] == "TURN_TIMEOUT"
    assert "longer than its 5 s limit" in state["answer"]
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]


def test_chat_call_gets_what_is_left_of_the_turn_per_attempt(
        make_context: Callable[..., Context], fake_chat: Callable[..., FakeChat]) -> None:
    model = fake_chat(replies=["Ten minutes [1]."])
    load_client()  # a cold import on a busy machine would eat into the six seconds
    agent = Agent(make_context(turn_timeout=6, request_timeout=30), InMemorySaver())
    assert agent.ask(BREAD_QUESTION, "t1")["status"] == "grounded"
    # Three attempts (one call, two SDK retries) and the SDK's 1.5 s of backoff must fit in the six seconds.
    # Both calls (the answer, then the grounding judge) are held to what is left of the turn.
    timeouts = [call["timeout"] for call in model.calls]
    assert len(timeouts) == 2 and all(1.2 < timeout <= (6 - 1.5) / 3 for timeout in timeouts)


def test_a_resumed_turn_gets_a_fresh_budget(make_context: Callable[..., Context],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    counts = count_nodes(monkeypatch, kill_first="retrieve")
    ctx = make_context(turn_timeout=1)
    with Agent(ctx) as first, pytest.raises(KeyboardInterrupt):
        first.ask(BREAD_QUESTION, "crash")
    time.sleep(1.2)  # the killed invocation's deadline has passed by the time the turn is resumed
    with Agent(ctx) as restarted:
        response = restarted.resume("crash")
    assert response["status"] == "grounded", response["error"]
    assert counts["classify"] == 1 and counts["retrieve"] == 2


def test_turn_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_TURN_TIMEOUT", "25")
    assert Context().turn_timeout == 25
    monkeypatch.setenv("RAG_AGENT_TURN_TIMEOUT", "soon")
    with pytest.raises(SettingsError, match="RAG_AGENT_TURN_TIMEOUT must be a number"):
        Context()


def test_an_answer_streaming_past_the_deadline_is_cut_off(make_context: Callable[..., Context],
                                                          fake_chat: Callable[..., FakeChat]) -> None:
    fake_chat(replies=["Knead it [1]. " * 20], token_delay=0.2)  # a server that never quite stops
    events: list[dict[str, str]] = []
    start = time.perf_counter()
    out = Agent(make_context(turn_timeout=1), InMemorySaver()).ask(BREAD_QUESTION, "drip", on_answer=events.append)
    assert out["error"]["code"] == "TURN_TIMEOUT" and time.perf_counter() - start < 3
    assert shown(events) == out["answer"]  # the sentences streamed before the cut are replaced by the error
