"""LangSmith tracing: off unless the user turns it on, and then sent where LANGSMITH_ENDPOINT says."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

PAGE = "# Isaac Sim\n\nIsaac Sim is a robotics simulator built on Omniverse for synthetic data.\n"


class StubLangSmith(BaseHTTPRequestHandler):
    """Accepts anything; records each request's method and path."""

    requests: list[str] = []

    def _ok(self, body: bytes = b"{}") -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        """Server info and anything else a client reads."""
        type(self).requests.append(f"GET {self.path}")
        self._ok()

    def do_POST(self) -> None:  # noqa: N802
        """Run uploads (batch or multipart)."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).requests.append(f"POST {self.path}")
        self._ok()

    do_PATCH = do_POST  # noqa: N815

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


def ask(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `rag-agent ask` over a one-page hash-embedded index in a fresh process."""
    data = tmp_path / "data"
    if not data.exists():
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "isaac.md").write_text(PAGE)
        ingest_folder(tmp_path / "docs", data_dir=data, collection="docs", embeddings=HashEmbeddings(256),
                      embedding_model="hash/256", progress=False)
        vectorstore.close_clients()
    tracing = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "COHERE_", "QDRANT_")
    base = {k: v for k, v in os.environ.items() if not k.startswith(tracing)}
    base |= {"RAG_AGENT_DATA_DIR": str(data), "RAG_AGENT_EMBEDDING_MODEL": "hash/256"}
    return subprocess.run([str(Path(sys.executable).with_name("rag-agent")), "ask", "--threshold", "0.1",
                           "What is Isaac Sim?"], capture_output=True, text=True, env=base | env, timeout=180)


def test_traces_go_to_the_configured_endpoint_only_when_tracing_is_on(endpoint: str, tmp_path: Path) -> None:
    off = ask(tmp_path, {"LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": "lsv2-fake-key"})
    assert off.returncode == 0, off.stderr
    assert StubLangSmith.requests == []  # an endpoint and a key alone do not turn tracing on
    on = ask(tmp_path, {"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": endpoint,
                        "LANGSMITH_API_KEY": "lsv2-fake-key"})
    assert on.returncode == 0, on.stderr
    assert any(r.startswith("POST /runs") for r in StubLangSmith.requests), StubLangSmith.requests
