"""Bounded memory: the thread keeps a window of messages, so checkpoints stop growing."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from itertools import cycle
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

import nodes.classify
import rag_agent.service
from graph.builder import compile_graph
from graph.context import Context
from logic.chunking import count_tokens
from logic.history import window_removals
from rag_agent.service import Agent, open_checkpointer
from tools.settings import get_settings

Ask = Callable[..., dict[str, Any]]

CONVERSATION = ["What is Isaac Sim?", "How do I use it for synthetic data?", "thanks",
                "How long should I knead bread dough?", "What temperature do I bake it at?"]


def _messages(n: int) -> list[Any]:
    """Alternate user and assistant messages with ids, as add_messages stores them."""
    return [(HumanMessage if i % 2 == 0 else AIMessage)(f"m{i}", id=f"id{i}") for i in range(n)]


def test_window_removes_nothing_while_short() -> None:
    assert window_removals(_messages(5), max_history=20) == []


def test_window_keeps_room_for_the_reply_and_starts_on_a_user_message() -> None:
    messages = _messages(21)  # ends with the new user message
    removed = {r.id for r in window_removals(messages, max_history=20)}
    kept = [m for m in messages if m.id not in removed]
    assert len(kept) <= 19
    assert isinstance(kept[0], HumanMessage)
    assert kept[-1] is messages[-1]


def test_window_skips_a_reply_at_its_start() -> None:
    messages = _messages(10)[1:]  # AI, Human, AI, ..., Human: a cut at 4 would start on an AI message
    removed = {r.id for r in window_removals(messages, max_history=5)}
    kept = [m for m in messages if m.id not in removed]
    assert isinstance(kept[0], HumanMessage) and len(kept) <= 4


def test_smallest_window_keeps_only_the_question() -> None:
    messages = _messages(7)
    removed = {r.id for r in window_removals(messages, max_history=2)}
    assert [m.id for m in messages if m.id not in removed] == ["id6"]


def _checkpoint_bytes(db: Path, thread: str) -> int:
    """Return the serialized size of the thread's latest checkpoint, as SQLite stores it."""
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT length(checkpoint) FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
    return int(row[0])


def _thread_bytes(db: Path, thread: str) -> int:
    """Return everything SQLite stores for the thread: every checkpoint, its metadata and pending writes."""
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints "
                              "WHERE thread_id = ?", (thread,)).fetchone()[0]
        writes = conn.execute("SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?",
                              (thread,)).fetchone()[0]
    return int(stored) + int(writes)


def _run_thread(agent: Agent, db: Path, thread: str, turns: int, measure_at: tuple[int, ...],
                bounded: bool = True) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Run `turns` turns of the question cycle; return latest-checkpoint bytes, window tokens, thread bytes.

    Every turn checks the state the next prompt is built from: at most `max_history` messages (when
    bounded), starting on a user message. At the measured turns the window's token count is printed too.
    """
    config: Any = {"configurable": {"thread_id": thread}}
    sizes: dict[int, int] = {}
    window_tokens: dict[int, int] = {}
    totals: dict[int, int] = {}
    for turn, question in zip(range(1, turns + 1), cycle(CONVERSATION), strict=False):
        response = agent.ask(question, thread_id=thread)
        assert response["status"] != "error", response
        assert response["turn"] == turn
        messages = agent.graph.get_state(config).values["messages"]
        if bounded:
            assert len(messages) <= agent.context.max_history
        assert isinstance(messages[0], HumanMessage)
        if turn in measure_at:
            sizes[turn] = _checkpoint_bytes(db, thread)
            totals[turn] = _thread_bytes(db, thread)
            window_tokens[turn] = sum(count_tokens(str(m.content)) for m in messages)
            print(f"{thread}: turn {turn}: checkpoint {sizes[turn]} bytes, thread {totals[turn]} bytes, "
                  f"{len(messages)} messages, "
                  f"{window_tokens[turn]} tokens in the window")
    return sizes, window_tokens, totals


def test_long_thread_stays_bounded_and_checkpoints_stay_flat(make_context: Callable[..., Context]) -> None:
    ctx = make_context(max_history=10)
    agent = Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir))
    db = Path(get_settings().data_dir) / "checkpoints.sqlite"
    sizes, _, totals = _run_thread(agent, db, "long", 200, (50, 200))
    print(f"checkpoint bytes at turn 50: {sizes[50]}, at turn 200: {sizes[200]}")
    # Same point in the question cycle (50 and 200 are both ≡ 0 mod 5), so the same window shape.
    assert abs(sizes[200] - sizes[50]) <= 0.05 * sizes[50]
    # Superseded checkpoints included: the thread's whole storage is as flat as its latest checkpoint.
    assert abs(totals[200] - totals[50]) <= 0.05 * totals[50]


LONG_TESTS = os.environ.get("CI") == "true" or os.environ.get("RAG_AGENT_LONG_TESTS") == "1"


@pytest.mark.long
@pytest.mark.skipif(not LONG_TESTS, reason="1,000-turn bounded-memory test skipped: runs when CI=true or "
                                          "RAG_AGENT_LONG_TESTS=1")
def test_thousand_turn_thread_stays_bounded_and_checkpoints_stay_flat(
    make_context: Callable[..., Context],
) -> None:
    ctx = make_context(max_history=10)
    agent = Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir))
    db = Path(get_settings().data_dir) / "checkpoints.sqlite"
    start = time.perf_counter()
    sizes, window_tokens, totals = _run_thread(agent, db, "thousand", 1000, (100, 1000))
    print(f"checkpoint bytes at turn 100: {sizes[100]}, at turn 1000: {sizes[1000]} "
          f"({time.perf_counter() - start:.1f} s for 1,000 turns)")
    # 100 and 1000 are both ≡ 0 mod 5: the same point in the question cycle, so the same window shape.
    assert abs(sizes[1000] - sizes[100]) <= 0.05 * sizes[100]
    assert abs(totals[1000] - totals[100]) <= 0.05 * totals[100]  # superseded checkpoints included
    # The prompt side: the history a prompt is built from is as long at turn 1000 as at turn 100.
    assert abs(window_tokens[1000] - window_tokens[100]) <= 0.05 * window_tokens[100]


def test_without_the_window_checkpoints_grow(make_context: Callable[..., Context],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: switch the bound off and the same loop's checkpoints grow, so the flat tests can fail."""
    monkeypatch.setattr(nodes.classify, "window_removals", lambda messages, max_history: [])
    ctx = make_context(max_history=10)
    agent = Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir))
    db = Path(get_settings().data_dir) / "checkpoints.sqlite"
    sizes, _, _ = _run_thread(agent, db, "unbounded", 100, (10, 100), bounded=False)
    print(f"unbounded: checkpoint bytes at turn 10: {sizes[10]}, at turn 100: {sizes[100]}")
    messages = agent.graph.get_state({"configurable": {"thread_id": "unbounded"}}).values["messages"]
    assert len(messages) == 200  # nothing was removed
    assert sizes[100] > 2 * sizes[10]


@pytest.fixture
def app(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """The conversation tests below run on each conversation store."""
    return compile_graph(checkpointer)


def test_followup_resolves_after_its_question_left_the_window(ask: Ask, make_context: Callable[..., Context]) -> None:
    ctx = make_context(max_history=4)
    ask("What is Isaac Sim?", context=ctx)
    for _ in range(5):
        ask("thanks", context=ctx)
    state = ask("How do I use it for synthetic data?", context=ctx)
    assert not any(m.content == "What is Isaac Sim?" for m in state["messages"])
    assert "Isaac Sim" in state["retrieval_query"]
    assert state["status"] == "grounded"


def test_a_followup_after_thanks_is_still_a_followup(ask: Ask) -> None:
    ask("Hi, what is Isaac Sim?")
    state = ask("Thanks! How do I use it for synthetic data?")
    assert state["retrieval_query"] == "How do I use Isaac Sim for synthetic data?"
    assert state["messages"][-2].content == "Thanks! How do I use it for synthetic data?"  # kept as typed
    assert state["status"] == "grounded"


def test_reset_restarts_the_turn_count(ask: Ask) -> None:
    ask("What is Isaac Sim?")
    ask("thanks")
    assert ask("/reset")["turns"] == 0
    assert ask("hello")["turns"] == 1


def test_legacy_thread_without_a_counter_counts_its_user_messages(make_context: Callable[..., Context]) -> None:
    saver = InMemorySaver()
    app = compile_graph(saver)
    config: Any = {"configurable": {"thread_id": "old"}}
    app.update_state(config, {"messages": [HumanMessage("hi"), AIMessage("Hello!")]}, as_node="classify")
    state = app.invoke({"messages": [HumanMessage("thanks")]}, config, context=make_context())
    assert state["turns"] == 2


@pytest.mark.parametrize("value", [1, 101])
def test_max_history_range_is_enforced(value: int) -> None:
    with pytest.raises(ValueError, match="max_history"):
        Context(max_history=value)


def test_without_pruning_a_thread_storage_grows(make_context: Callable[..., Context],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control for the thread-bytes check: keep superseded checkpoints and storage grows per turn."""
    monkeypatch.setattr(rag_agent.service, "prune_superseded", lambda saver, thread_id: None)
    ctx = make_context(max_history=10)
    agent = Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir))
    _, _, totals = _run_thread(agent, Path(get_settings().data_dir) / "checkpoints.sqlite", "kept", 30, (10, 30))
    assert totals[30] > 2 * totals[10]


def test_a_finished_turn_leaves_one_checkpoint(make_context: Callable[..., Context]) -> None:
    ctx = make_context()
    with Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir)) as agent:
        agent.ask("What is Isaac Sim?", "one")
        followup = agent.ask("How do I use it for synthetic data?", "one")
    with sqlite3.connect(Path(get_settings().data_dir) / "checkpoints.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'one'").fetchone()[0] == 1
    # The pruned thread still remembers: the follow-up is resolved from the first turn.
    assert followup["turn"] == 2 and "Isaac Sim" in followup["retrieval_query"]
