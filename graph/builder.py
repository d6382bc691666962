"""The agent's graph: six nodes, their edges, and how it is compiled for Python and for langgraph dev."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.context import Context
from graph.observe import logged
from graph.recording import ends_turn, starts_turn
from graph.routing import (
    route_after_classify,
    route_after_generate_grounded,
    route_after_retrieve,
    route_after_score_gate,
)
from graph.state import InputState, OutputState, State
from nodes.classify import classify
from nodes.error_handler import error_handler
from nodes.generate_grounded import generate_grounded
from nodes.generate_not_found import generate_not_found
from nodes.retrieve import retrieve
from nodes.score_gate import score_gate

# A turn takes at most six steps; a low limit turns an accidental loop into a fast error.
RECURSION_LIMIT = 12


def build_graph() -> StateGraph[State, Context, InputState, OutputState]:
    """Wire the six nodes; every conditional edge is a `route_after_*` function."""
    builder = StateGraph(State, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    # The nodes after which a turn can end write its record (graph/recording.py): every caller gets one.
    builder.add_node("classify", logged(ends_turn(starts_turn(classify), route_after_classify)))
    builder.add_node("retrieve", logged(retrieve))
    builder.add_node("score_gate", logged(score_gate))
    builder.add_node("generate_grounded", logged(ends_turn(generate_grounded, route_after_generate_grounded)))
    builder.add_node("generate_not_found", logged(ends_turn(generate_not_found)))
    builder.add_node("error_handler", logged(ends_turn(error_handler)))

    builder.add_edge(START, "classify")
    builder.add_conditional_edges("classify", route_after_classify)
    builder.add_conditional_edges("retrieve", route_after_retrieve)
    builder.add_conditional_edges("score_gate", route_after_score_gate)
    builder.add_conditional_edges("generate_grounded", route_after_generate_grounded)
    builder.add_edge("generate_not_found", END)
    builder.add_edge("error_handler", END)
    return builder


def compile_graph(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile for Python use; pass a checkpointer for multi-turn memory per thread_id."""
    return build_graph().compile(checkpointer=checkpointer, name="rag-agent").with_config(
        recursion_limit=RECURSION_LIMIT
    )


# For `langgraph dev` / LangGraph server, which bring their own persistence and refuse a checkpointer.
graph = compile_graph()
