"""Feedback from the CLI: always stored in the records, and sent to LangSmith on the turn's run when tracing is on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

pytestmark = pytest.mark.integration
PAGE = "# Isaac Sim\n\nIsaac Sim is a robotics simulator built on Omniverse for synthetic data.\n"
RAG_AGENT = str(Path(sys.executable).with_name("rag-agent"))


class StubLangSmith(BaseHTTPRequestHandler):
    """Accepts anything; keeps each request's method, path and body."""

    requests: list[tuple[str, bytes]] = []

    def do_GET(self) -> None:  # noqa: N802
        """Server info."""
        self._answer(b"")

    def do_POST(self) -> None:  # noqa: N802
        """Run uploads and feedback."""
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    do_PATCH = do_POST  # noqa: N815

    def _answer(self, body: bytes) -> None:
        type(self).requests.append((f"{self.command} {self.path}", body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        """Keep test output quiet."""


@pytest.fixture
def endpoint() -> Iterator[str]:
    StubLangSmith.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubLangSmith)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "isaac.md").write_text(PAGE)
    ingest_folder(tmp_path / "docs", data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    vectorstore.close_clients()
    return tmp_path / "data"


def cli(data: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run rag-agent in a fresh process (LangSmith reads its settings once per process)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_",
                                                                    "COHERE_", "QDRANT_", "RAG_AGENT_"))}
    base |= {"RAG_AGENT_DATA_DIR": str(data), "RAG_AGENT_EMBEDDING_MODEL": "hash/256"}
    return subprocess.run([RAG_AGENT, *args], capture_output=True, text=True, env=base | env, timeout=180)


def test_feedback_reaches_langsmith_only_with_tracing_on(endpoint: str, data: Path) -> None:
    tracing = {"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": "lsv2-fake-key"}
    asked = cli(data, tracing, "ask", "--json", "--threshold", "0.1", "What is Isaac Sim?")
    assert asked.returncode == 0, asked.stderr
    turn = json.loads(asked.stdout)["turn_id"]
    run_id = str(uuid.UUID(turn))
    # The turn's trace has the turn id as its run id, so feedback can name it.
    assert any(run_id.encode() in body for path, body in StubLangSmith.requests if "/runs" in path)

    rated = cli(data, tracing, "feedback", turn, "down", "Not what I asked")
    assert rated.returncode == 0, rated.stderr
    assert "also sent to LangSmith" in rated.stdout
    (sent,) = [json.loads(body) for path, body in StubLangSmith.requests if path.startswith("POST /feedback")]
    assert (sent["run_id"], sent["key"], sent["score"], sent["comment"]) == (run_id, "user_rating", 0,
                                                                              "Not what I asked")

    StubLangSmith.requests = []
    quiet = cli(data, {"LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": "lsv2-fake-key"}, "feedback", turn, "up")
    assert quiet.returncode == 0 and "LangSmith" not in quiet.stdout
    assert StubLangSmith.requests == []  # stored locally only: tracing is off


def test_feedback_on_an_unknown_turn_is_refused(data: Path) -> None:
    result = cli(data, {}, "feedback", "no-such-turn", "up")
    assert result.returncode == 2
    assert "no recorded turn has the id 'no-such-turn'" in result.stderr
    bad = cli(data, {}, "feedback", "no-such-turn", "sideways")
    assert bad.returncode == 2 and "rating must be up (+1) or down (-1)" in bad.stderr
