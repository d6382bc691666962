"""The graph owns the turn: a filter or a selection applies to the turn that sends it, whoever the caller is.

Driven by each conversation store (memory, SQLite, and Postgres when CI=true).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from graph.builder import compile_graph
from graph.context import Context
from rag_agent.service import Agent
from tests.conversation import EXPECTED, TURNS, sources, summary


def test_graph_invoke_sending_only_what_changed(make_context: Callable[..., Context],
        checkpointer: BaseCheckpointSaver[Any]) -> None:
    app, config = compile_graph(checkpointer), {"configurable": {"thread_id": "studio-like"}}
    seen = [summary(app.invoke({"messages": [HumanMessage(text)], **extra}, config, context=make_context()))
            for text, extra in TURNS]
    assert sources(seen) == EXPECTED
    first = app.invoke({"messages": [HumanMessage(TURNS[0][0])], **TURNS[0][1]}, config, context=make_context())
    assert first["not_found"]["reason"] == "filtered_out"  # the filter held on the turn that sent it


def test_agent_ask_gives_the_same_statuses_and_citations(make_context: Callable[..., Context],
        checkpointer: BaseCheckpointSaver[Any]) -> None:
    app, config = compile_graph(checkpointer), {"configurable": {"thread_id": "graph"}}
    by_graph = [summary(app.invoke({"messages": [HumanMessage(text)], **extra}, config, context=make_context()))
                for text, extra in TURNS]
    with Agent(make_context(), checkpointer) as agent:
        by_agent = [summary(agent.ask(text, "agent", **extra)) for text, extra in TURNS]
    assert by_agent == by_graph
    assert sources(by_agent) == EXPECTED


def test_the_turn_after_a_filtered_one_reports_no_filter(make_context: Callable[..., Context],
        checkpointer: BaseCheckpointSaver[Any]) -> None:
    app, config = compile_graph(checkpointer), {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [HumanMessage(TURNS[0][0])], **TURNS[0][1]}, config, context=make_context())
    state = app.invoke({"messages": [HumanMessage(TURNS[2][0])]}, config, context=make_context())
    assert (state["applied_filters"], state["selection"]) == ({}, "")
    stored = app.get_state(config).values
    assert "filters" not in stored and "context" not in stored  # nothing of the last turn's inputs is kept
