"""The offline answer reads a section on into the page's next chunk, with the bundled embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from logic.errors import RetrievalError
from rag_agent.service import Agent
from tests.tiny_corpus import SECTION_GOES_ON_PAGE
from tools import search
from tools.embeddings import LOCAL_MODEL, get_embeddings
from tools.ingest import ingest_folder

QUESTION = "The next widgetctl sync stops at once with lock held by another process. How do I recover?"


@pytest.fixture
def section_cut_in_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Index one page whose section chunking cuts in two: the symptom first, the fix in the next chunk."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "syncing.md").write_text(SECTION_GOES_ON_PAGE)
    data = tmp_path / "data"
    ingest_folder(tmp_path / "docs", data_dir=data, collection="docs", embeddings=get_embeddings(LOCAL_MODEL),
                  embedding_model=LOCAL_MODEL, progress=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(data))
    return data


def test_the_fix_in_the_sections_next_chunk_is_quoted_though_only_the_symptom_was_retrieved(
        section_cut_in_two: Path) -> None:
    pieces = search.chunks_at(section_cut_in_two, "docs", [("syncing.md", 0), ("syncing.md", 1)])
    assert len(pieces) == 2 and "--resume" in pieces[("syncing.md", 1)]["text"]  # chunking cut the section
    with Agent(Context(top_k=1), InMemorySaver()) as agent:  # one chunk retrieved: the symptom's
        out = agent.ask(QUESTION, "t")
        retrieved = agent.graph.get_state({"configurable": {"thread_id": "t"}}).values["retrieved"]
    assert out["status"] == "grounded"
    assert "delete `.widget/lock` and run `widgetctl sync --resume`" in out["answer"]
    # The turn's sections: the one retrieval found (top_k 1), then the one read on, cited like any other.
    assert [c["chunk_index"] for c in retrieved] == [0, 1]
    assert [c["chunk_id"] for c in out["citations"]] == [c["chunk_id"] for c in retrieved]


def test_a_store_that_fails_while_reading_on_leaves_the_answer_from_what_was_retrieved(
        section_cut_in_two: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def outage(*_: object) -> dict[tuple[str, int], dict[str, object]]:
        raise RetrievalError("the vector store failed (ConnectError)")
    monkeypatch.setattr(search, "chunks_at", outage)  # retrieval went through; the one later lookup fails
    with Agent(Context(top_k=1), InMemorySaver()) as agent:
        out = agent.ask(QUESTION)
    assert out["status"] == "grounded" and out["error"] is None
    assert "lock held by another process" in out["answer"] and "--resume" not in out["answer"]
    assert [c["chunk_id"] for c in out["citations"]] == [c["chunk_id"] for c in out["retrieved"]]

