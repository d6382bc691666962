"""The snapshot's ANN graph: real questions find what exact search finds, filters hold, old snapshots still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logic.chunking import chunk_markdown
from tools import ann, embedded_export, embedded_index
from tools.embeddings import get_embeddings

HERE = Path(__file__).resolve()
SHARED = Path(os.environ.get("RAG_AGENT_SHARED") or next(
    (p / "shared" for p in HERE.parents if (p / "shared" / "eval").is_dir()), HERE.parents[3] / "shared"))
TEXTBOOK = SHARED / "eval" / "textbook"
SYNTHETIC = 8_000
# The real embedder and the shared questions, as the other integration tests that read them.
pytestmark = pytest.mark.skipif(not TEXTBOOK.is_dir(), reason=f"ANN recall tests read {TEXTBOOK}")


def write_snapshot(folder: Path, vectors: np.ndarray[Any, Any], pages: int) -> embedded_index.Snapshot:
    """Write a snapshot of these vectors spread over `pages` sources, with its indexes, and open it."""
    folder.mkdir()
    rows = len(vectors)
    source_ids = (np.arange(rows) % pages).astype(np.int32)  # a page's rows spread through the index, as at scale
    lines = [json.dumps({"id": str(r), "page_content": f"chunk {r}", "metadata": {"source": f"p{r % pages}"}})
             .encode() + b"\n" for r in range(rows)]
    (folder / "payloads.jsonl").write_bytes(b"".join(lines))
    np.save(folder / "offsets.npy", np.concatenate([[0], np.cumsum([len(line) for line in lines])]))
    np.save(folder / "vectors.npy", vectors)
    np.save(folder / "source_ids.npy", source_ids)
    (folder / "meta.json").write_text(json.dumps({"sources": [f"p{i}" for i in range(pages)], "hybrid": False}))
    embedded_export.write_indexes(folder, vectors, source_ids, pages)
    return embedded_index.load(folder)


@pytest.fixture(scope="module")
def real() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Return the MiniLM vectors of two textbook pages' chunks and of the real questions they answer."""
    embeddings = get_embeddings("local/all-MiniLM-L6-v2")
    # Two pages (embedding more costs the test seconds each) and the questions they answer: their
    # nearest chunks stand out. (For a question answered nowhere in the index the "nearest" are
    # near-ties, which no index is asked to order exactly.)
    pages = ["module-1/ros2-architecture.md", "module-1/nodes-topics-services.md"]
    texts = {p: (TEXTBOOK / "corpus" / p).read_text() for p in pages}
    chunks = [c.embedding_text() for p in pages for c in chunk_markdown(texts[p], p, 200, 0)]
    asked = [json.loads(line) for line in (TEXTBOOK / "textbook-questions.jsonl").read_text().splitlines()]
    questions = [q["question"] for q in asked if set(pages) & set(q.get("gold", []))]
    assert len(questions) >= 3
    return (np.asarray(embeddings.embed_documents(chunks), np.float32),
            np.asarray([embeddings.embed_query(q) for q in questions], np.float32))


@pytest.fixture(scope="module")
def snapshot(real: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]], tmp_path_factory: pytest.TempPathFactory,
             ) -> embedded_index.Snapshot:
    """A graph-backed snapshot: the real chunks among synthetic ones shaped like them (blends of two real
    chunks plus noise, as pages on neighbouring topics are), so the graph must tell close neighbours apart."""
    chunks, _ = real
    rng = np.random.default_rng(3)
    first, second = (chunks[rng.integers(0, len(chunks), SYNTHETIC)] for _ in range(2))
    share = rng.uniform(0, 1, (SYNTHETIC, 1)).astype(np.float32)
    noise = rng.standard_normal(first.shape).astype(np.float32) / np.sqrt(chunks.shape[1])
    synthetic = share * first + (1 - share) * second + noise * rng.uniform(0.3, 1.0, (SYNTHETIC, 1)).astype(np.float32)
    vectors = np.concatenate([chunks, synthetic])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors[rng.permutation(len(vectors))]
    original = ann.MIN_ROWS, ann.THREADS
    # The graph is built at this small size too, on one thread: the same graph on every run.
    ann.MIN_ROWS, ann.THREADS = 1_000, 1
    try:
        return write_snapshot(tmp_path_factory.mktemp("ann") / "snap", vectors, pages=400)
    finally:
        ann.MIN_ROWS, ann.THREADS = original


def exact(snap: embedded_index.Snapshot, query: np.ndarray[Any, Any], k: int,
          rows: np.ndarray[Any, Any] | None = None) -> list[str]:
    """Return the ids of the k nearest chunks by brute force: what search returned before the graph."""
    rows = np.arange(snap.rows) if rows is None else rows
    scores = snap.vectors[rows] @ (query / np.linalg.norm(query))
    return [str(r) for r in rows[np.argsort(-scores, kind="stable")[:k]]]


def test_real_questions_find_what_exact_search_finds(snapshot: embedded_index.Snapshot,
                                                     real: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _, questions = real
    assert snapshot.ann is not None and len(snapshot.ann) == snapshot.rows
    # The graph, not a brute-force shortcut: a candidate list spanning the index would hide a broken graph.
    asked: list[int] = []
    proposed = ann.candidates
    monkeypatch.setattr(ann, "candidates", lambda index, q, count: asked.append(count) or proposed(index, q, count))
    found = 0
    for query in questions:
        hits = embedded_index.search(snapshot, query.tolist(), 10)
        found += len({d.metadata["_id"] for d, _ in hits} & set(exact(snapshot, query, 10)))
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True) and len(hits) == 10
    assert asked and max(asked) < snapshot.rows / 10
    assert found / (10 * len(questions)) >= 0.99


def test_filtered_search_returns_the_exact_best_of_the_admitted_pages(
        snapshot: embedded_index.Snapshot, real: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]) -> None:
    _, questions = real
    for wanted in (["p3"], [f"p{i}" for i in range(0, 400, 2)]):  # a page; half the index
        rows = snapshot.rows_of(wanted)
        for query in questions:
            hits = embedded_index.search(snapshot, query.tolist(), 10, sources=wanted)
            assert {d.metadata["source"] for d, _ in hits} <= set(wanted)
            assert len(hits) == min(10, len(rows))
            best = exact(snapshot, query, 10, rows)
            assert len({d.metadata["_id"] for d, _ in hits} & set(best)) >= (10 if len(rows) < 1000 else 9)


def test_a_snapshot_exported_before_the_graph_still_searches_exactly(
        snapshot: embedded_index.Snapshot, real: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]) -> None:
    _, questions = real
    for name in (ann.FILE, "source_rows.npy", "source_starts.npy"):  # what older exports did not write
        (snapshot.folder / name).rename(snapshot.folder / f"{name}.moved")
    try:
        old = embedded_index.load(snapshot.folder)
        assert old.ann is None
        for query in questions:
            assert [d.metadata["_id"] for d, _ in embedded_index.search(old, query.tolist(), 10)] == \
                exact(old, query, 10)
            hits = embedded_index.search(old, query.tolist(), 5, sources=["p7"])
            assert [d.metadata["_id"] for d, _ in hits] == exact(old, query, 5, old.rows_of(["p7"]))
    finally:
        for name in (ann.FILE, "source_rows.npy", "source_starts.npy"):
            (snapshot.folder / f"{name}.moved").rename(snapshot.folder / name)


def test_a_reader_that_opened_a_graph_can_still_load_the_bundled_embedder() -> None:
    # usearch 2.26.6 (its numkong kernels) made loading onnxruntime afterwards crash the process:
    # a reader opens the snapshot before it first embeds a question.
    script = "import usearch.index, onnxruntime; print('ok')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done
