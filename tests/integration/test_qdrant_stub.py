"""A Qdrant server failing in the middle of a turn, with the real qdrant-client against a stub on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from rag_agent.service import Agent
from tests.tiny_corpus import LEAD_IN_PAGE
from tools import embedded_index, vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

PAGE = "# Isaac Sim\n\n## Overview\n\nIsaac Sim is a robotics simulator built on Omniverse for synthetic data.\n"


COLLECTION_INFO = {
    "status": "green", "optimizer_status": "ok", "segments_count": 1, "payload_schema": {},
    "config": {"params": {"vectors": {"size": 256, "distance": "Cosine"}},
               "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000},
               "optimizer_config": {"deleted_threshold": 0.2, "vacuum_min_vector_number": 1000,
                                    "default_segment_number": 0, "flush_interval_sec": 5},
               "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0}},
}


class StubQdrant(BaseHTTPRequestHandler):
    """Answers the server's version and collection info; the points query fails while `failing` is set."""

    points: list[dict[str, Any]] = []
    requests: list[str] = []
    failing = True

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        """Version check and collection info."""
        type(self).requests.append(f"GET {self.path}")
        if self.path.startswith("/collections/"):
            self._send(200, {"result": COLLECTION_INFO | {"points_count": len(self.points)}, "status": "ok", "time": 0})
        else:
            self._send(200, {"title": "qdrant - vector search engine", "version": "1.20.0"})

    def do_POST(self) -> None:  # noqa: N802
        """The points query: an internal error while failing, else cosine-ranked stored points."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(f"POST {self.path}")
        if self.failing:
            self._send(500, {"status": {"error": "Service internal error: stub failure"}, "time": 0.0})
            return
        if self.path.endswith("/points/scroll"):  # a filtered read: the stored points matching every condition
            def holds(point: dict[str, Any], conditions: list[dict[str, Any]]) -> bool:
                return all(point["payload"]["metadata"].get(c["key"].split(".")[-1]) == c["match"]["value"]
                           for c in conditions)

            either = [f["must"] for f in body["filter"].get("should") or []] or [body["filter"]["must"]]
            hits = [{"id": p["id"], "payload": p["payload"]} for p in self.points if any(holds(p, c) for c in either)]
            self._send(200, {"result": {"points": hits[: body.get("limit", 10)], "next_page_offset": None},
                             "status": "ok", "time": 0.0})
            return
        query = body["query"]["nearest"] if isinstance(body["query"], dict) else body["query"]
        scored = sorted(({"id": p["id"], "version": 0, "score": sum(a * b for a, b in zip(query, p["vector"],
                                                                                            strict=True)),
                          "payload": p["payload"]} for p in self.points), key=lambda p: -p["score"])
        self._send(200, {"result": {"points": scored[: body.get("limit", 10)]}, "status": "ok", "time": 0.0})

    def log_message(self, *args: object) -> None:
        """Keep test output quiet."""


@pytest.fixture(params=[PAGE])
def qdrant(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           ) -> Iterator[type[StubQdrant]]:
    """Index a page locally, then serve its points from a stub Qdrant server that QDRANT_URL points at."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "isaac.md").write_text(request.param)
    ingest_folder(tmp_path / "docs", data_dir=tmp_path, collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False, retrieval="dense")  # the stub scores dense queries only
    snap = embedded_index.current(tmp_path, "docs")
    assert snap is not None
    stored = [snap.document(r) for r in range(snap.rows)]
    StubQdrant.points = [{"id": d.metadata.pop("_id"), "vector": snap.vectors[r].tolist(),
                          "payload": {"page_content": d.page_content, "metadata": d.metadata}}
                         for r, d in enumerate(stored)]
    StubQdrant.requests, StubQdrant.failing = [], True
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubQdrant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{server.server_port}")
    yield StubQdrant
    vectorstore.close_clients()
    server.shutdown()
    server.server_close()


def test_vector_store_failing_mid_turn_is_reported_and_the_next_turn_works(
        qdrant: type[StubQdrant], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path))
    agent = Agent(Context(embedding_model="hash/256", score_threshold=0.1), InMemorySaver())
    out = agent.ask("What is Isaac Sim?", "q1")
    assert out["status"] == "error" and out["error"]["code"] == "RETRIEVAL_UNAVAILABLE"
    assert "stub failure" not in out["answer"]
    queries = [r for r in qdrant.requests if r.startswith("POST") and "/points/query" in r]
    assert len(queries) == 1  # the collection answered, the query failed: one attempt, no hidden retries
    qdrant.failing = False
    again = agent.ask("What is Isaac Sim?", "q1")
    assert again["status"] == "grounded" and again["citations"][0]["source"] == "isaac.md"
    messages = agent.graph.get_state({"configurable": {"thread_id": "q1"}}).values["messages"]
    assert [(m.type, m.content) for m in messages if m.type == "human"] == [("human", "What is Isaac Sim?")] * 2
    assert [m.type for m in messages] == ["human", "ai", "human", "ai"]


@pytest.mark.parametrize("qdrant", [LEAD_IN_PAGE], indirect=True)
def test_a_lead_in_gets_its_block_from_the_servers_next_chunk(
        qdrant: type[StubQdrant], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path))
    qdrant.failing = False
    with Agent(Context(embedding_model="hash/256", score_threshold=0.05), InMemorySaver()) as agent:
        out = agent.ask("How can a library find out whether the application configured the logger?")
    assert out["status"] == "grounded"
    assert "with `is_configured` and `get_config`:" in out["answer"] and ">>> is_configured()" in out["answer"]
    # Read from the server, not the local copy: one request for the turn's neighbours.
    assert sum(r.endswith("/points/scroll") for r in qdrant.requests) == 1
