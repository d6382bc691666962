"""Durability: a turn killed between nodes resumes from its last finished node (a killed process: tests/integration)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import graph.builder
from graph.context import Context
from rag_agent.cli.commands import main
from rag_agent.service import Agent
from tools.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]
NODES = ("classify", "retrieve", "score_gate", "generate_grounded", "generate_not_found", "error_handler")


def count_nodes(monkeypatch: pytest.MonkeyPatch, kill_first: str | None = None) -> Counter[str]:
    """Count every node call; the first call of `kill_first` dies as Ctrl-C would."""
    counts: Counter[str] = Counter()
    for name in NODES:
        node = getattr(graph.builder, name)

        # functools.wraps keeps the signature, so LangGraph still passes `runtime` where the node takes it.
        @functools.wraps(node)
        def counted(*args: Any, _name: str = name, _node: Any = node, **kwargs: Any) -> Any:
            counts[_name] += 1
            if _name == kill_first and counts[_name] == 1:
                raise KeyboardInterrupt("killed between nodes")
            return _node(*args, **kwargs)

        monkeypatch.setattr(graph.builder, name, counted)
    return counts


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Node call counts; the first score_gate call is interrupted."""
    return count_nodes(monkeypatch, kill_first="score_gate")


def test_killed_turn_resumes_from_the_last_finished_node(
    make_context: Callable[..., Context], calls: Counter[str]
) -> None:
    # Ctrl-C: LangGraph saves on the way out in any durability mode; the hard-kill test below is the
    # one only `durability="sync"` passes.
    ctx = make_context()
    with Agent(ctx) as first, pytest.raises(KeyboardInterrupt):  # SQLite in the data dir, as the CLI uses
        first.ask("What is Isaac Sim?", "crash")
    assert calls == {"classify": 1, "retrieve": 1, "score_gate": 1}

    with Agent(ctx) as restarted:  # a new process would open the same file
        assert restarted.graph.get_state({"configurable": {"thread_id": "crash"}}).next == ("score_gate",)
        response = restarted.resume("crash")
        state = restarted.graph.get_state({"configurable": {"thread_id": "crash"}}).values
    assert response["status"] == "grounded" and response["turn"] == 1
    # classify and retrieve were not run again; only the killed node and the ones after it ran.
    assert calls == {"classify": 1, "retrieve": 1, "score_gate": 2, "generate_grounded": 1}
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]


def test_resume_without_an_unfinished_turn_is_an_input_error(make_context: Callable[..., Context]) -> None:
    with Agent(make_context()) as agent:
        agent.ask("hello", "done")
        response = agent.resume("done")
    assert response["error"]["code"] == "INVALID_INPUT"
    assert "no unfinished turn" in response["error"]["message"]


def test_cli_resume(make_context: Callable[..., Context], calls: Counter[str], capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = make_context()
    with Agent(ctx) as agent, pytest.raises(KeyboardInterrupt):
        agent.ask("How long should I knead bread dough?", "cli-crash")
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    assert main(["--data-dir", get_settings().data_dir, "resume", "--thread", "cli-crash", "--json"]) == 0
    assert '"status": "grounded"' in capsys.readouterr().out
    assert Path(get_settings().data_dir, "checkpoints.sqlite").is_file()
    assert calls["retrieve"] == 1


def test_a_new_message_after_a_killed_turn_starts_a_new_turn(
    make_context: Callable[..., Context], calls: Counter[str]
) -> None:
    with Agent(make_context()) as agent:
        with pytest.raises(KeyboardInterrupt):
            agent.ask("What is Isaac Sim?", "moved-on")
        response = agent.ask("How long should I knead bread dough?", "moved-on")
        messages = agent.graph.get_state({"configurable": {"thread_id": "moved-on"}}).values["messages"]
    assert response["status"] == "grounded" and response["turn"] == 2
    # The unfinished question stays in the thread unanswered; the new one is answered.
    assert [type(m) for m in messages] == [HumanMessage, HumanMessage, AIMessage]
