"""What `langgraph dev` needs from the project: langgraph.json, a graph without a checkpointer, JSON schemas."""

from __future__ import annotations

import json
from pathlib import Path

import graph.builder as builder

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_serves_the_module_graph_and_the_auth_handler() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    graphs = {name: spec["path"] for name, spec in config["graphs"].items()}
    assert graphs == {"agent": "./graph/builder.py:graph", "indexer": "./graph/indexer.py:graph"}
    assert config["auth"]["path"] == "./rag_agent/server/auth.py:auth"
    for spec in (*graphs.values(), config["auth"]["path"]):
        assert (ROOT / spec.split(":")[0]).is_file()


def test_served_graph_has_no_checkpointer() -> None:
    # The server refuses a graph compiled with its own checkpointer.
    assert builder.graph.checkpointer is None


def test_studio_schemas_are_buildable() -> None:
    # The server builds these with pydantic; typing.TypedDict on Python 3.11 made them fail silently.
    assert list(builder.graph.get_input_jsonschema()["properties"]) == ["messages", "context", "filters", "page_url"]
    output = builder.graph.get_output_jsonschema()["properties"]
    assert {"messages", "answer", "citations", "status", "turns"} <= set(output)
    context = builder.graph.get_context_jsonschema()
    assert context is not None
    assert context["properties"]["top_k"]["default"] == 5
    assert "description" in context["properties"]["score_threshold"]
