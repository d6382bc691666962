"""One writer per thread: two turns sent at once on one thread serialise instead of forking its history."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import rag_agent.threads
from graph.context import Context
from rag_agent.service import Agent, open_checkpointer
from tools.settings import get_settings

QUESTIONS = ("What is Isaac Sim?", "How long should I knead bread dough?")
PAIRS = 50


def test_concurrent_turns_on_one_thread_do_not_fork_its_history(make_context: Callable[..., Context]) -> None:
    ctx = make_context(score_threshold=0.0)  # about the thread's history, not the gate: every turn answers
    agent = Agent(ctx, checkpointer=open_checkpointer(get_settings().data_dir))  # SQLite, as the CLI uses
    thread = "shared"
    config: Any = {"configurable": {"thread_id": thread}}
    barrier = threading.Barrier(2)

    def turn(question: str) -> dict[str, Any]:
        barrier.wait()  # both turns start together, so they race for the thread
        return agent.ask(question, thread_id=thread)

    before: list[Any] = []
    turns = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        for pair in range(PAIRS):
            asked = [f"{q} (pair {pair}, {side})" for q, side in zip(QUESTIONS, "ab", strict=True)]
            responses = list(pool.map(turn, asked))
            assert all(r["status"] == "grounded" for r in responses), responses
            # Distinct, consecutive turn numbers: neither turn saw the thread without the other's.
            assert sorted(r["turn"] for r in responses) == [turns + 1, turns + 2]
            turns += 2

            after = agent.graph.get_state(config).values["messages"]
            assert agent.graph.get_state(config).values["turns"] == turns
            # The window may drop the oldest messages; everything it kept is an unchanged suffix of before.
            old_ids = {m.id for m in before}
            kept = [m for m in after if m.id in old_ids]
            assert [m.id for m in kept] == [m.id for m in before[len(before) - len(kept):]]
            assert after[:len(kept)] == kept
            new = after[len(kept):]
            # Exactly two more user messages and two more replies, alternating: one question, its answer,
            # the other question, its answer. A fork would lose a pair or interleave two questions.
            assert [type(m) for m in new] == [HumanMessage, AIMessage, HumanMessage, AIMessage], new
            assert sorted(str(m.content) for m in new[::2]) == sorted(asked)
            assert all(isinstance(m, HumanMessage if i % 2 == 0 else AIMessage) for i, m in enumerate(after))
            assert len(after) <= ctx.max_history
            before = after
    agent.close()


def test_thread_locks_do_not_pile_up_one_per_thread_ever_seen(make_context: Callable[..., Context]) -> None:
    agent = Agent(make_context(), checkpointer=InMemorySaver())
    for i in range(50):
        assert agent.reset(f"thread-{i}")["status"] == "reset"
    gc.collect()
    assert len(rag_agent.threads._thread_locks) == 0  # a lock lives only while a turn holds or awaits it
