"""Unit-test fixtures: no network, no real model, a tiny hash-embedded corpus per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

import tools.embeddings
from graph import record_stores
from graph.builder import compile_graph
from graph.context import Context
from rag_agent.checkpointers import open_sqlite
from rag_agent.pg_checkpointer import open_postgres
from tests.tiny_corpus import CORPUS
from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder
from tools.settings import ENV_NAMES

EMBEDDER = "hash/256"

# Every variable the deployment settings and the per-run defaults read: unit tests start from none of them.
_ENV_VARS = (*ENV_NAMES, *(f"RAG_AGENT_{f.name.upper()}" for f in fields(Context)))


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
def make_context(data_dir: str, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Context]:
    """Serve the indexed corpus (RAG_AGENT_DATA_DIR) and build a Context; the threshold lets on-topic questions in."""
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", data_dir)

    def make(**overrides: Any) -> Context:
        if "collection" in overrides:  # a test's own collection is one the deployment serves
            monkeypatch.setenv("RAG_AGENT_COLLECTIONS", overrides["collection"])
        settings: dict[str, Any] = {"embedding_model": EMBEDDER, "score_threshold": 0.1}
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


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    """Each conversation store the agent supports; Postgres runs when CI=true (or a test server is named)."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    if request.param == "sqlite":
        saver = open_sqlite(tmp_path / "checkpoints.sqlite")
        yield saver
        saver.conn.close()
        return
    server = os.environ.get("RAG_AGENT_TEST_POSTGRES_URL")
    if not server and os.environ.get("CI") != "true":
        pytest.skip("Postgres conversation store skipped: set CI=true and RAG_AGENT_TEST_POSTGRES_URL to run it")
    server = server or "postgresql://postgres@127.0.0.1:5432/test"
    schema = f"rag_agent_unit_{uuid.uuid4().hex[:12]}"  # one per test: nothing shared with other runs
    with psycopg.connect(server, connect_timeout=3, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in server else "?"
        saver = open_postgres(f"{server}{sep}options=-csearch_path%3D{schema}")
        try:
            yield saver
        finally:
            saver.close()
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
