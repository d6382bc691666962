"""Sessions: listing threads, pruning idle ones, expiring a stale thread on its next message, reset()."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context, SettingsError
from logic import durations
from logic.durations import parse_duration, utcnow
from rag_agent.cli.commands import main
from rag_agent.service import Agent, open_checkpointer
from rag_agent.sessions import list_sessions
from tools.settings import get_settings

FIRST, FOLLOW_UP = "What is Isaac Sim?", "How do I use it for synthetic data?"


def later(monkeypatch: pytest.MonkeyPatch, delta: timedelta) -> None:
    """Move the sessions clock forward."""
    start = utcnow()
    monkeypatch.setattr(durations, "utcnow", lambda: start + delta)


@pytest.mark.parametrize(("text", "expected"), [
    ("30m", timedelta(minutes=30)), ("24h", timedelta(hours=24)), ("7d", timedelta(days=7)),
    ("45s", timedelta(seconds=45)), ("2w", timedelta(weeks=2)), ("1.5h", timedelta(minutes=90)),
    (" 12H ", timedelta(hours=12)),
])
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "24", "h", "-1h", "0h", "24 hours", "1y", "1h30m"])
def test_bad_duration_is_a_clear_error(text: str) -> None:
    with pytest.raises(SettingsError, match=r"--idle: invalid duration .*30m, 24h, 7d"):
        parse_duration(text, "--idle")


def test_session_ttl_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_settings().ttl == timedelta(hours=24)
    monkeypatch.setenv("RAG_AGENT_SESSION_TTL", "30m")
    assert get_settings().ttl == timedelta(minutes=30)
    monkeypatch.setenv("RAG_AGENT_SESSION_TTL", "off")
    assert get_settings().ttl is None
    monkeypatch.setenv("RAG_AGENT_SESSION_TTL", "soon")
    with pytest.raises(SettingsError, match="RAG_AGENT_SESSION_TTL"):
        Agent(Context(), InMemorySaver())


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_list_sessions(make_context: Callable[..., Context], store: str) -> None:
    ctx = make_context()
    saver = InMemorySaver() if store == "memory" else open_checkpointer(get_settings().data_dir)
    agent = Agent(ctx, saver)
    agent.ask(FIRST, "t1")
    agent.ask(FOLLOW_UP, "t1")
    agent.ask("hello", "t2")
    sessions = list_sessions(saver)
    assert [(s.thread_id, s.turns) for s in sessions] == [("t2", 1), ("t1", 2)]
    assert all(isinstance(s.last_activity, datetime) and s.idle() < timedelta(minutes=1) for s in sessions)


def test_prune_deletes_only_idle_threads(make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent(make_context(), InMemorySaver())
    agent.ask(FIRST, "old")
    assert agent.prune(timedelta(hours=24)) == []
    later(monkeypatch, timedelta(hours=25))
    assert agent.prune(timedelta(hours=24)) == ["old"]
    assert list_sessions(agent.checkpointer) == []
    monkeypatch.setattr(durations, "utcnow", utcnow)
    assert agent.ask(FOLLOW_UP, "old")["turn"] == 1


def test_stale_thread_starts_fresh_and_says_so(
    make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    agent = Agent(make_context(), checkpointer)
    agent.ask(FIRST, "t1")
    later(monkeypatch, timedelta(hours=25))
    response = agent.ask(FOLLOW_UP, "t1")
    assert response["turn"] == 1
    assert "Isaac Sim" not in response["retrieval_query"]
    assert response["answer"].startswith("(Our earlier conversation on this thread expired after 1d")
    state = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).values
    assert [m.content for m in state["messages"]][0] == FOLLOW_UP


def test_thread_within_ttl_keeps_its_memory(
    make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = Agent(make_context(), InMemorySaver())
    agent.ask(FIRST, "t1")
    later(monkeypatch, timedelta(hours=23))
    response = agent.ask(FOLLOW_UP, "t1")
    assert response["turn"] == 2 and "expired" not in response["answer"]


def test_reset_api_forgets_the_thread(make_context: Callable[..., Context]) -> None:
    agent = Agent(make_context(), InMemorySaver())
    agent.ask(FIRST, "t1")
    result = agent.reset("t1")
    assert (result["status"], result["turn"], result["error"]) == ("reset", 0, None)
    assert "cleared" in result["answer"]
    response = agent.ask(FOLLOW_UP, "t1")
    assert response["turn"] == 1 and "Isaac Sim" not in response["retrieval_query"]
    assert agent.reset("../bad")["error"]["code"] == "INVALID_INPUT"


def test_cli_sessions_list_and_prune(
    make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = make_context()
    with Agent(ctx) as agent:
        agent.ask(FIRST, "cli-thread")
        agent.ask(FOLLOW_UP, "cli-thread")
    assert main(["--data-dir", get_settings().data_dir, "sessions", "list"]) == 0
    out = capsys.readouterr().out
    assert "cli-thread" in out and "2 turns" in out
    assert main(["--data-dir", get_settings().data_dir, "sessions", "prune", "--idle", "24h"]) == 0
    assert "deleted 0" in capsys.readouterr().out
    later(monkeypatch, timedelta(days=2))
    assert main(["--data-dir", get_settings().data_dir, "sessions", "prune", "--idle", "24h"]) == 0
    assert "deleted 1 conversation(s) idle longer than 1d: cli-thread" in capsys.readouterr().out
    assert main(["--data-dir", get_settings().data_dir, "sessions", "list"]) == 0
    assert "no conversations" in capsys.readouterr().out


def test_cli_bad_idle_duration(data_dir: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", data_dir, "sessions", "prune", "--idle", "5x"]) == 2
    assert "--idle: invalid duration '5x'" in capsys.readouterr().err


def test_cli_prune_idle_zero_deletes_every_thread_and_says_how_many(
    make_context: Callable[..., Context], capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = make_context()
    with Agent(ctx) as agent:
        agent.ask(FIRST, "zero-a")
        agent.ask(FIRST, "zero-b")
    assert main(["--data-dir", get_settings().data_dir, "sessions", "prune", "--idle", "0s"]) == 0
    assert "deleted 2 conversation(s) idle longer than 0s" in capsys.readouterr().out
    assert main(["--data-dir", get_settings().data_dir, "sessions", "list"]) == 0
    assert "no conversations" in capsys.readouterr().out
