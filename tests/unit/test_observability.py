"""Per-turn structured logs: one line per node and a summary, never an API key or the prompt canary."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from logic.canary import CANARY
from nodes.prompts import GROUNDED_SYSTEM
from rag_agent.service import Agent
from tests.fakes import FakeChat, install

FAKE_KEY = "sk-test-DO-NOT-LOG-4f9a2c"
BREAD_QUESTION = "How long should I knead bread dough?"


@pytest.fixture
def log_lines(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    caplog.set_level(logging.DEBUG)
    return lambda: [r.getMessage() for r in caplog.records]


def test_each_node_and_the_turn_get_one_structured_line(make_context: Callable[..., Context],
                                                        log_lines: Callable[[], list[str]]) -> None:
    Agent(make_context(), InMemorySaver()).ask(BREAD_QUESTION, "log-1")
    nodes = [line for line in log_lines() if line.startswith("node ")]
    assert [re.search(r"node=(\w+)", line).group(1) for line in nodes] == [  # type: ignore[union-attr]
        "classify", "retrieve", "score_gate", "generate_grounded"]
    assert all(re.fullmatch(r"node thread=log-1 node=\w+ ms=\d+ error=-", line) for line in nodes)
    (summary,) = [line for line in log_lines() if line.startswith("turn ")]
    assert re.fullmatch(r"turn thread=log-1 status=grounded error=- ms=\d+ tokens=\d+", summary)


def test_a_failed_turn_logs_its_code_and_never_the_key_or_the_canary(
        make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, log_lines: Callable[[], list[str]]) -> None:
    # A provider whose error message echoes the key and the prompt (some do).
    install(monkeypatch, FakeChat(error=ConnectionError(f"invalid api key {FAKE_KEY}; prompt was: {GROUNDED_SYSTEM}")),
            key=FAKE_KEY)
    out = Agent(make_context(), InMemorySaver()).ask(BREAD_QUESTION, "log-2")
    assert out["error"]["code"] == "LLM_UNAVAILABLE"
    assert "node thread=log-2 node=generate_grounded" in caplog.text and "error=LLM_UNAVAILABLE" in caplog.text
    assert any(line.startswith("turn thread=log-2 status=error error=LLM_UNAVAILABLE") for line in log_lines())
    assert "invalid api key" in caplog.text  # the provider's message is logged, minus its secrets
    assert FAKE_KEY not in caplog.text and CANARY not in caplog.text
