"""Conversation memory in a real Postgres server: shared across Agent instances, one writer per thread."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langgraph.runtime import Runtime

import graph.builder
import rag_agent.threads
from graph.context import Context
from graph.state import State
from logic import durations
from rag_agent.pg_checkpointer import PooledPostgresSaver, advisory_key
from rag_agent.service import Agent
from rag_agent.sessions import list_sessions
from tests.integration.conftest import postgres_schema
from tests.unit import conftest as unit
from tools.settings import get_settings

# The hash-embedded corpus and the hermetic environment of the unit tests.
hermetic, data_dir, make_context = unit.hermetic, unit.data_dir, unit.make_context

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A URL whose search_path is a schema unique to this run, dropped afterwards."""
    with postgres_schema("Postgres checkpointer tests") as url:
        yield url


@pytest.fixture
def thread() -> str:
    return f"pg-{uuid.uuid4().hex[:12]}"


def _rows(url: str, thread_id: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)).fetchone()
    assert row is not None
    return int(row[0])


def test_followup_resolves_across_agent_instances(
    pg_url: str, thread: str, make_context: Callable[..., Context]
) -> None:
    ctx = make_context()
    with Agent(ctx, pg_url) as first:
        assert isinstance(first.checkpointer, PooledPostgresSaver)
        assert first.ask("What is Isaac Sim?", thread)["turn"] == 1
    with Agent(ctx, pg_url) as second:
        response = second.ask("How do I use it for synthetic data?", thread)
    assert response["turn"] == 2
    assert "Isaac Sim" in response["retrieval_query"]
    assert _rows(pg_url, thread) > 0
    assert not (os.path.exists(os.path.join(get_settings().data_dir, "checkpoints.sqlite")))


def test_finished_turns_keep_only_the_latest_checkpoint(
    pg_url: str, thread: str, make_context: Callable[..., Context]
) -> None:
    with Agent(make_context(), pg_url) as agent:
        for question in ("What is Isaac Sim?", "How do I use it for synthetic data?", "thanks"):
            agent.ask(question, thread)
            assert _rows(pg_url, thread) == 1  # each turn writes ~5 checkpoints; the superseded ones go
        state = agent.graph.get_state({"configurable": {"thread_id": thread}}).values
    assert state["turns"] == 3 and len(state["messages"]) == 6


def test_a_turn_waits_for_another_sessions_lock_on_its_thread(
    pg_url: str, thread: str, make_context: Callable[..., Context]
) -> None:
    done: list[dict[str, Any]] = []
    with Agent(make_context(), pg_url) as agent, psycopg.connect(pg_url) as other:
        # `other` plays a second process that is mid-turn on the same thread.
        other.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(thread),))
        worker = threading.Thread(target=lambda: done.append(agent.ask("What is Isaac Sim?", thread)))
        worker.start()
        worker.join(timeout=1.5)
        assert not done, "the turn ran while another session held the thread's lock"
        other.commit()  # ends the transaction, releasing the lock
        worker.join(timeout=30)
    assert done and done[0]["status"] == "grounded"


def test_two_agents_on_one_thread_serialise(
    pg_url: str, thread: str, make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Separate in-process locks, as two processes would have: only Postgres can serialise them.
    monkeypatch.setattr(rag_agent.threads, "thread_lock", lambda _thread_id: threading.Lock())
    slow_retrieve = graph.builder.retrieve

    def retrieve(state: State, runtime: Runtime[Context]) -> Any:
        time.sleep(0.5)  # widen the window in which unserialised turns would fork the thread
        return slow_retrieve(state, runtime)

    monkeypatch.setattr(graph.builder, "retrieve", retrieve)
    ctx = make_context()
    agents = [Agent(ctx, pg_url), Agent(ctx, pg_url)]
    results: list[dict[str, Any]] = []
    workers = [threading.Thread(target=lambda a=a, q=q: results.append(a.ask(q, thread)))
               for a, q in zip(agents, ["What is Isaac Sim?", "How long should I knead bread dough?"], strict=True)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    state = agents[0].graph.get_state({"configurable": {"thread_id": thread}}).values
    for agent in agents:
        agent.close()
    assert sorted(r["turn"] for r in results) == [1, 2]
    assert state["turns"] == 2 and len(state["messages"]) == 4


def test_sessions_list_and_prune_in_postgres(
    pg_url: str, thread: str, make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Agent(make_context(), pg_url) as agent:
        agent.ask("What is Isaac Sim?", thread)
        agent.ask("thanks", thread)
        listed = {s.thread_id: s.turns for s in list_sessions(agent.checkpointer)}
        assert listed[thread] == 2
        start = durations.utcnow()
        monkeypatch.setattr(durations, "utcnow", lambda: start + timedelta(days=2))
        assert thread in agent.prune(timedelta(hours=24))
    assert _rows(pg_url, thread) == 0
