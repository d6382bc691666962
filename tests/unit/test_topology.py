"""The compiled graph's shape: six nodes and exactly the edges the routing functions can take."""

from __future__ import annotations

import graph.builder as builder

EXPECTED_NODES = {
    "__start__",
    "classify",
    "retrieve",
    "score_gate",
    "generate_grounded",
    "generate_not_found",
    "error_handler",
    "__end__",
}

EXPECTED_EDGES = {
    ("__start__", "classify"),
    ("classify", "retrieve"),
    ("classify", "error_handler"),
    ("classify", "generate_grounded"),
    ("classify", "generate_not_found"),
    ("retrieve", "score_gate"),
    ("retrieve", "error_handler"),
    ("score_gate", "generate_grounded"),
    ("score_gate", "generate_not_found"),
    ("score_gate", "error_handler"),
    ("generate_grounded", "__end__"),
    ("generate_grounded", "generate_not_found"),
    ("generate_grounded", "error_handler"),
    ("generate_not_found", "__end__"),
    ("error_handler", "__end__"),
}


def test_graph_has_the_six_nodes() -> None:
    assert set(builder.graph.get_graph().nodes) == EXPECTED_NODES


def test_graph_has_exactly_the_expected_edges() -> None:
    edges = {(edge.source, edge.target) for edge in builder.graph.get_graph().edges}
    assert edges == EXPECTED_EDGES


def test_checkpointed_graph_has_the_same_shape() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    drawn = builder.compile_graph(InMemorySaver()).get_graph()
    assert set(drawn.nodes) == EXPECTED_NODES
    assert {(edge.source, edge.target) for edge in drawn.edges} == EXPECTED_EDGES
