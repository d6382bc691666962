"""One-time loading happens before a turn's deadline starts, and says so when it is slow."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.checkpoint.memory import InMemorySaver

import tools.embeddings
from graph.context import Context
from rag_agent import warmup
from rag_agent.service import Agent
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

BREAD_QUESTION = "How long should I knead bread dough?"


def slow_loader(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[str]:
    """Make building any embedder take `seconds`; return the names built."""
    real, built = tools.embeddings._build, []

    def build(name: str) -> Embeddings:
        time.sleep(seconds)
        built.append(name)
        return real(name)

    monkeypatch.setattr(tools.embeddings, "_build", build)
    return built


def test_slow_loading_does_not_use_up_the_first_turns_deadline(
        monkeypatch: pytest.MonkeyPatch, make_context: Callable[..., Context]) -> None:
    # Loading takes longer than the whole turn may: counted in the turn, it would end in TURN_TIMEOUT.
    built = slow_loader(monkeypatch, 3.5)
    agent = Agent(make_context(turn_timeout=3.0), checkpointer=InMemorySaver())
    first = agent.ask(BREAD_QUESTION, thread_id="t1")
    assert first["error"] is None and first["status"] == "grounded"
    assert first["execution_time_seconds"] < 3.0
    assert agent.ask("What is Isaac Sim?", thread_id="t1")["error"] is None
    assert built == ["hash/256"]  # loaded once, by the process, not per turn


def test_a_model_that_cannot_load_is_still_reported_by_the_turn(tmp_path: Path) -> None:
    # The unit-test fixture makes the real local model fail to load; loading first must not hide that.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Bread\n\nKnead bread dough for ten minutes.\n")
    ingest_folder(tmp_path / "docs", data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(384),
                  embedding_model="local/all-MiniLM-L6-v2", progress=False)
    agent = Agent(Context(embedding_model="local/all-MiniLM-L6-v2", data_dir=str(tmp_path / "data")),
                  checkpointer=InMemorySaver())
    response = agent.ask(BREAD_QUESTION, thread_id="t1")
    assert response["status"] == "error"
    assert response["error"]["code"] == "EMBEDDING_UNAVAILABLE"


def test_slow_loading_is_announced(monkeypatch: pytest.MonkeyPatch, make_context: Callable[..., Context]) -> None:
    slow_loader(monkeypatch, 0.6)
    monkeypatch.setattr(warmup, "ANNOUNCE_AFTER", 0.1)
    said: list[Any] = []
    warmup.load(make_context(), lambda: said.append(warmup.MESSAGE))
    assert said == ["loading the embedder…"]


def test_quick_loading_is_not_announced(monkeypatch: pytest.MonkeyPatch, make_context: Callable[..., Context]) -> None:
    said: list[Any] = []
    warmup.load(make_context(), lambda: said.append(warmup.MESSAGE))
    time.sleep(0.05)
    assert said == []
