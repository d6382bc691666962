"""The routing table: where a turn goes after each node, given what that node wrote into state."""

from __future__ import annotations

import pytest
from langgraph.graph import END

from graph.routing import (
    route_after_classify,
    route_after_generate_grounded,
    route_after_retrieve,
    route_after_score_gate,
)

ERROR = {"code": "INVALID_INPUT", "message": "the question is empty", "node": "classify"}
CITATION = {"index": 1, "chunk_id": "c1", "source": "a.md", "source_url": "a.md", "title": "A",
            "heading_hierarchy": [], "score": 0.9, "text": "text"}


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"intent": "question"}, "retrieve"),
        # classify only decides: the short fixed replies are written by generate_grounded,
        # and a request no documentation could answer is declined by generate_not_found.
        ({"intent": "chitchat"}, "generate_grounded"),
        ({"intent": "reset"}, "generate_grounded"),
        ({"intent": "out_of_scope"}, "generate_not_found"),
        ({"intent": "invalid", "error": ERROR}, "error_handler"),
        ({"intent": "question", "error": ERROR}, "error_handler"),
        ({"intent": "question", "error": None}, "retrieve"),
    ],
)
def test_route_after_classify(state: dict, expected: str) -> None:
    assert route_after_classify(state) == expected


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"retrieved": []}, "score_gate"),
        ({"error": None}, "score_gate"),
        ({"error": ERROR}, "error_handler"),
    ],
)
def test_route_after_retrieve(state: dict, expected: str) -> None:
    assert route_after_retrieve(state) == expected


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"grounded": True}, "generate_grounded"),
        ({"grounded": False}, "generate_not_found"),
        ({}, "generate_not_found"),
        ({"grounded": True, "error": ERROR}, "error_handler"),
    ],
)
def test_route_after_score_gate(state: dict, expected: str) -> None:
    assert route_after_score_gate(state) == expected


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"citations": [CITATION]}, END),
        ({"citations": []}, "generate_not_found"),
        ({}, "generate_not_found"),
        ({"citations": [CITATION], "error": ERROR}, "error_handler"),
        ({"citations": [], "error": ERROR}, "error_handler"),
        ({"intent": "chitchat", "citations": []}, END),
        ({"intent": "reset"}, END),
    ],
)
def test_route_after_generate_grounded(state: dict, expected: str) -> None:
    assert route_after_generate_grounded(state) == expected
