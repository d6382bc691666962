"""Unit-test fixtures: no network, no real model, a tiny hash-embedded corpus per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import tools.embeddings
from graph import record_stores
from graph.builder import compile_graph
from graph.context import Context
from tests.tiny_corpus import CORPUS
from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

EMBEDDER = "hash/256"

_ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "COHERE_API_KEY",
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "RAG_AGENT_CHAT_MODEL",
    "RAG_AGENT_EMBEDDING_MODEL",
    "RAG_AGENT_COLLECTION",
    "RAG_AGENT_DATA_DIR",
    "RAG_AGENT_CHECKPOINTER",
    "RAG_AGENT_SESSION_TTL",
    "RAG_AGENT_TURN_TIMEOUT",
    "RAG_AGENT_RECORDS",
    "RAG_AGENT_RECORDS_RETENTION_DAYS",
)


@pytest.fixture(autouse=True)
def hermetic(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forbid the real local model and every external service; release Qdrant locks afterwards."""

    def no_real_model(model: str) -> Any:
        raise RuntimeError(f"unit tests must not load the real local embedding model ({model})")

    monkeypatch.setattr(tools.embeddings, "_local", no_real_model)
    # Integration tests in the same process may have cached the real model; unit tests start empty.
    monkeypatch.setattr(tools.embeddings, "_cache", {})
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    yield
    vectorstore.close_clients()
    record_stores.close_defaults()  # graph runs without an Agent opened a records store in the test's data dir


@pytest.fixture
def data_dir(tmp_path: Path) -> str:
    """A data directory holding the tiny corpus, indexed with the hash embedder."""
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in CORPUS.items():
        (root / name).write_text(text, encoding="utf-8")
    index = tmp_path / "data"
    ingest_folder(root, data_dir=index, collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model=EMBEDDER, progress=False)
    return str(index)


@pytest.fixture
def make_context(data_dir: str) -> Callable[..., Context]:
    """Build a Context over the indexed corpus; the default threshold lets on-topic questions through."""

    def make(**overrides: Any) -> Context:
        settings: dict[str, Any] = {"embedding_model": EMBEDDER, "data_dir": data_dir, "score_threshold": 0.1}
        return Context(**(settings | overrides))

    return make


@pytest.fixture
def app() -> Any:
    """The compiled graph with in-memory conversation memory."""
    return compile_graph(InMemorySaver())


@pytest.fixture
def ask(app: Any, make_context: Callable[..., Context]) -> Callable[..., dict[str, Any]]:
    """Send one user message on a thread and return the turn's final state."""

    def run(text: Any, thread: str = "t1", context: Context | None = None) -> dict[str, Any]:
        config = {"configurable": {"thread_id": thread}}
        state: dict[str, Any] = app.invoke({"messages": [HumanMessage(content=text)]}, config,
                                           context=context or make_context())
        return state

    return run
