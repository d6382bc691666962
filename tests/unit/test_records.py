"""Turn records and feedback: one masked record per turn from every caller, ratings by turn id, retention, off."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from graph.builder import compile_graph
from graph.context import Context, SettingsError
from logic.errors import InvalidInputError
from rag_agent import records
from rag_agent.service import Agent
from tools.records import RecordStore, UnknownTurnError

SECRET = "sk-proj-Abc123Def456Ghi789"
EMAIL = "jane.doe@example.org"


@pytest.fixture
def agent(make_context: Callable[..., Context], tmp_path: Path) -> Any:
    # A low gate: the first question's pasted key and e-mail are words this tiny corpus never uses.
    with Agent(make_context(score_threshold=0.01), checkpointer=str(tmp_path / "memory.sqlite")) as agent:
        yield agent


def rows(path: Path, table: str = "rag_agent_turns") -> list[dict[str, Any]]:
    with sqlite3.connect(path) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]


def test_each_turn_writes_one_masked_record_in_the_conversation_database(agent: Agent, tmp_path: Path) -> None:
    answered = agent.ask(f"What is Isaac Sim? My key is {SECRET}, mail {EMAIL}", "t1")
    refused = agent.ask("What does a Unity Pro licence cost?", "t1")
    bad = agent.ask("   ", "t1")
    stored = {r["turn_id"]: r for r in rows(tmp_path / "memory.sqlite")}
    assert set(stored) == {answered["turn_id"], refused["turn_id"], bad["turn_id"]}
    first = stored[answered["turn_id"]]
    assert first["status"] == "grounded" and first["thread_id"] == "t1" and first["retrieved"] == 1
    assert SECRET not in str(stored) and EMAIL not in str(stored)
    assert "***" in first["question"] and "[email]" in first["question"]
    assert "isaac-sim.md" in first["sources"] and first["embedder"] == "hash/256" and first["index_version"]
    assert first["latency_ms"] > 0 and first["tokens"] == answered["tokens_used"]
    assert stored[refused["turn_id"]]["status"] == "not_found"
    assert stored[refused["turn_id"]]["not_found_reason"] == refused["not_found"]["reason"]
    # Refused before the graph ran: still a turn the docs team should see, with its error code.
    assert stored[bad["turn_id"]]["error_code"] == "INVALID_INPUT"
    assert answered["timestamp"].endswith("Z") and answered["timestamp"] < refused["timestamp"]


def test_a_graph_run_without_the_agent_records_in_the_data_dirs_database(make_context: Callable[..., Context],
                                                                        data_dir: str) -> None:
    # The langgraph server path: the exported graph, no Agent, no checkpointer of ours.
    state = compile_graph().invoke({"messages": [HumanMessage("How long should I knead bread dough?")]},
                                   {"configurable": {"thread_id": "web-1"}}, context=make_context())
    assert state["turn_id"] and state["timestamp"]
    (record,) = rows(Path(data_dir) / "checkpoints.sqlite")
    assert record["turn_id"] == state["turn_id"] and record["thread_id"] == "web-1"
    assert record["question"] == "How long should I knead bread dough?" and record["status"] == "grounded"


def test_feedback_is_stored_by_turn_id_and_bad_feedback_is_refused(agent: Agent) -> None:
    turn = agent.ask("What is Isaac Sim?", "t1")["turn_id"]
    assert agent.feedback(turn, "down", f"Wrong page, write to {EMAIL}")["rating"] == -1
    (stored,) = agent.records.feedback()
    assert stored["question"] == "What is Isaac Sim?" and stored["comment"] == "Wrong page, write to [email]"
    agent.feedback(turn, 1)  # a second rating replaces the first
    assert [(f["rating"], f["comment"]) for f in agent.records.feedback()] == [(1, None)]
    with pytest.raises(UnknownTurnError, match="no recorded turn has the id 'nope'"):
        agent.feedback("nope", "up")
    with pytest.raises(InvalidInputError, match="rating must be up"):
        agent.feedback(turn, 5)
    with pytest.raises(InvalidInputError, match="rating must be"):
        agent.records.record_feedback(turn, 0)


def test_recording_can_be_turned_off(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_RECORDS", "off")
    response = agent.ask("What is Isaac Sim?", "t1")
    assert response["status"] == "grounded" and response["turn_id"]
    assert agent.records.turns() == []
    monkeypatch.setenv("RAG_AGENT_RECORDS", "sometimes")
    with pytest.raises(SettingsError, match="RAG_AGENT_RECORDS must be on or off"):
        agent.ask("What is Isaac Sim?", "t1")


def test_retention_deletes_records_older_than_the_setting(tmp_path: Path, make_context: Callable[..., Context],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memory.sqlite"
    old = RecordStore(str(path))
    old.record_turn({"turn_id": "old", "thread_id": "t0", "started_at": 1.0, "finished_at": time.time() - 8 * 86400,
                     "question": "q", "standalone_query": "q", "status": "grounded", "flagged": 0, "model": "",
                     "embedder": "", "tokens": 0, "latency_ms": 1.0, "index_version": "", "retrieved": 1})
    old.record_feedback("old", -1, "stale")
    old.close()
    monkeypatch.setenv("RAG_AGENT_RECORDS_RETENTION_DAYS", "7")
    with Agent(make_context(), checkpointer=str(path)) as agent:
        new = agent.ask("What is Isaac Sim?", "t1")["turn_id"]
        assert [r["turn_id"] for r in agent.records.turns()] == [new]
        assert agent.records.feedback() == []


def test_sessions_are_counted_from_the_records(agent: Agent) -> None:
    agent.ask("What is Isaac Sim?", "a")
    agent.ask("hello", "a")
    agent.ask("How long should I knead bread dough?", "b")
    sessions = agent.records.sessions()
    assert sessions["a"]["turns"] == 2 and sessions["a"]["retrievals"] == 1
    assert sessions["b"]["turns"] == 1 and sessions["b"]["tokens"] > 0
    assert sessions["a"]["created_at"] < sessions["b"]["created_at"]


def test_open_store_uses_the_checkpointer_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", str(tmp_path / "elsewhere.sqlite"))
    store = records.open_store(tmp_path / "data")
    assert store.where == str(tmp_path / "elsewhere.sqlite")
    records.close_store(store.where)


def test_sessions_list_shows_created_at_and_counts(agent: Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from rag_agent.cli import commands as cli

    first = agent.ask("What is Isaac Sim?", "a")
    agent.ask("hello", "a")
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", str(tmp_path / "memory.sqlite"))
    assert cli.main(["--data-dir", str(tmp_path / "data"), "sessions", "list", "--json"]) == 0
    (listed,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (listed["thread_id"], listed["turns"], listed["retrieval_count"]) == ("a", 2, 1)
    assert listed["total_tokens_used"] == first["tokens_used"] > 0
    assert listed["created_at"].endswith("Z") and listed["created_at"] <= first["timestamp"]  # the first turn's start
