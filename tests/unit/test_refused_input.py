"""Refused input through the graph: a clear INVALID_INPUT, and nothing of it stored in the thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from graph.context import Context


def run(app: Any, context: Context, turn: dict[str, Any], thread: str) -> dict[str, Any]:
    state: dict[str, Any] = app.invoke(turn, {"configurable": {"thread_id": thread}}, context=context)
    return state


@pytest.mark.parametrize("content", [42, {"text": "hi"}, [1, 2], True], ids=["int", "dict", "list", "bool"])
def test_non_string_content_is_invalid_input_not_a_validation_error(
        app: Any, make_context: Callable[..., Context], content: object) -> None:
    ctx = make_context()
    run(app, ctx, {"messages": [("user", "What is Isaac Sim?")]}, "n1")
    state = run(app, ctx, {"messages": [{"role": "user", "content": content}]}, "n1")
    assert state["status"] == "error" and state["error"]["code"] == "INVALID_INPUT"
    assert "plain text" in state["answer"] and "validation error" not in state["answer"].lower()
    assert [m.type for m in state["messages"]] == ["human", "ai"] and state["turns"] == 1  # the first turn only


def test_oversized_message_is_never_written_to_the_thread(app: Any, make_context: Callable[..., Context]) -> None:
    huge = "x" * 1_000_000
    state = run(app, make_context(), {"messages": [HumanMessage(huge)]}, "big")
    assert state["error"]["code"] == "INVALID_INPUT" and "too long" in state["answer"]
    assert state["messages"] == []
    # Not in any checkpoint either, not even the one recording the run's input.
    history = list(app.get_state_history({"configurable": {"thread_id": "big"}}))
    assert all(len(str(snapshot.values.get("messages", ""))) < 10_000 for snapshot in history)


def test_turn_refused_for_a_bad_filter_is_not_stored(app: Any, make_context: Callable[..., Context]) -> None:
    ctx = make_context()
    run(app, ctx, {"messages": [("user", "What is Isaac Sim?")]}, "f1")
    state = run(app, ctx, {"messages": [("user", "What is Isaac Sim?")], "filters": {"source": "nowhere"}}, "f1")
    assert state["error"]["code"] == "INVALID_INPUT"
    assert [m.type for m in state["messages"]] == ["human", "ai"] and state["turns"] == 1
    again = run(app, ctx, {"messages": [("user", "What does Replicator do?")], "filters": {}}, "f1")
    assert again["status"] == "grounded" and again["turns"] == 2
