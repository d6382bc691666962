"""Hybrid retrieval on a small local index: an acronym the embedder cannot see is still found, per index mode."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

import tools.embeddings
from graph.context import Context
from logic.errors import IndexMismatchError
from rag_agent.cli.commands import main
from tools import embedded_index, manifest
from tools.ingest import ingest_folder

VOCABULARY = ("robot", "wheel", "gripper", "camera")
FILLERS = 35  # more pages than retrieve's 30 dense candidates


class VocabularyEmbeddings(Embeddings):
    """Counts a few known words plus a constant; like a real embedder, it has never seen "NITROS"."""

    def _embed(self, text: str) -> list[float]:
        words = re.findall(r"[a-z]+", text.lower())
        vector = [1.0] + [float(words.count(w)) for w in VOCABULARY]
        norm = sum(v * v for v in vector) ** 0.5
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed chunks."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


def write_corpus(root: Path) -> Path:
    """Pages a question about NITROS resembles more (cosine 0.5) than the NITROS page itself (0.45)."""
    root.mkdir(parents=True)
    for n in range(FILLERS):
        (root / f"part-{n}.md").write_text(f"# Part {n}\n\nThe robot has a wheel and a gripper.\n")
    (root / "nitros.md").write_text("# NITROS\n\nNITROS moves camera camera frames between nodes quickly.\n")
    return root


def build(tmp_path: Path, retrieval: str | None, **kwargs: Any) -> Any:
    return ingest_folder(tmp_path / "docs", data_dir=tmp_path / "data", collection="docs",
                         embeddings=VocabularyEmbeddings(), embedding_model="vocab/test", progress=False,
                         retrieval=retrieval, **kwargs)


@pytest.fixture
def ask_nitros(tmp_path: Path, app: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], dict[str, Any]]:
    """Index the corpus in a given mode and ask the graph "What is NITROS?"."""
    write_corpus(tmp_path / "docs")
    monkeypatch.setitem(tools.embeddings._cache, "vocab/test", VocabularyEmbeddings())

    def run(retrieval: str) -> dict[str, Any]:
        build(tmp_path, retrieval, recreate=True)
        monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
        ctx = Context(embedding_model="vocab/test", score_threshold=0.0)
        config = {"configurable": {"thread_id": retrieval}}
        state: dict[str, Any] = app.invoke({"messages": [HumanMessage("What is NITROS?")]}, config, context=ctx)
        return state

    return run


def test_hybrid_finds_an_acronym_that_dense_search_misses(ask_nitros: Callable[[str], dict[str, Any]]) -> None:
    dense = ask_nitros("dense")
    assert "nitros.md" not in {c["source"] for c in dense["retrieved"]}
    hybrid = ask_nitros("hybrid")
    assert hybrid["status"] == "grounded"
    assert hybrid["citations"][0]["source"] == "nitros.md"


def test_hybrid_hits_carry_their_cosine_not_the_fusion_score(ask_nitros: Callable[[str], dict[str, Any]]) -> None:
    state = ask_nitros("hybrid")
    cosines = {c["source"]: c["score"] for c in state["retrieved"]}
    assert cosines.pop("nitros.md") == pytest.approx(1 / 5**0.5, abs=1e-3)  # 1 / sqrt(1 + 2²)
    assert list(cosines.values()) == pytest.approx([0.5] * 4, abs=1e-3)
    # top_score is the best cosine and the gate's score a probability, never a rank-fusion score.
    assert state["top_score"] == pytest.approx(max(c["score"] for c in state["retrieved"]), abs=1e-3)
    assert 0 < state["gate_score"] < 1


def test_mode_is_stored_and_kept_by_a_plain_rerun(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs")
    build(tmp_path, "hybrid")
    info = manifest.load(tmp_path / "data")["collections"]["docs"]
    assert info["retrieval"] == "hybrid" and info["bm25_average_length"] > 0
    report = build(tmp_path, None)
    assert report.retrieval == "hybrid" and report.unchanged == FILLERS + 1


def test_new_index_gets_the_default_mode(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs")
    assert build(tmp_path, None).retrieval == manifest.DEFAULT_RETRIEVAL


def test_switching_mode_needs_recreate(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs")
    build(tmp_path, "dense")
    with pytest.raises(IndexMismatchError, match="--recreate --retrieval hybrid"):
        build(tmp_path, "hybrid")
    assert build(tmp_path, "hybrid", recreate=True).retrieval == "hybrid"
    snap = embedded_index.current(tmp_path / "data", "docs")
    assert snap is not None and snap.hybrid and snap.terms is not None and len(snap.terms)


def test_cli_switch_without_recreate_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_corpus(tmp_path / "docs")
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/64")
    argv = ["--data-dir", str(tmp_path / "data"), "ingest", str(tmp_path / "docs")]
    assert main([*argv, "--retrieval", "dense"]) == 0
    assert "dense retrieval" in capsys.readouterr().out
    assert main([*argv, "--retrieval", "hybrid"]) == 1
    assert "uses dense retrieval, not hybrid; run ingest with --recreate" in capsys.readouterr().err
    assert main(["--data-dir", str(tmp_path / "data"), "config", "--json"]) == 0
    assert '"retrieval": "dense (stored with the index)"' in capsys.readouterr().out



@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_eval_builds_its_corpus_in_the_mode_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], mode: str) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q1", "question": "What is NITROS?", "gold": ["nitros.md"]}\n'
                         '{"id": "q2", "question": "stock market prices", "expected": "NOT_FOUND"}\n')
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/64")
    corpus = write_corpus(tmp_path / "docs")
    argv = ["--data-dir", str(tmp_path / "data"), "eval", str(questions), "--corpus", str(corpus)]
    assert main([*argv, "--retrieval", mode, "--json"]) == 0
    assert f"{mode} retrieval" in capsys.readouterr().err  # --json keeps stdout for the JSON alone
    assert manifest.load(tmp_path / "data")["collections"]["eval-docs"]["retrieval"] == mode
