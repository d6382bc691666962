"""The embedded snapshot: what ingest exports is what search reads, filters hold, damage is a clear error."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from qdrant_client import QdrantClient

from graph.context import Context
from logic.errors import IndexMissingError, RetrievalError
from logic.filters import Scope
from rag_agent.service import Agent
from tests.tiny_corpus import LEAD_IN_PAGE, SPLIT_CODE_PAGE, SPLIT_TABLE_PAGE
from tools import embedded_index, manifest, qdrant_search, search, sparse, vectorstore
from tools.embeddings import HashEmbeddings
from tools.index_store import Points
from tools.ingest import ingest_folder


def qdrant_copy(data_dir: str) -> QdrantClient:
    """Load the snapshot's chunks into an in-memory Qdrant, as ingest would write them to a server."""
    snap = embedded_index.current(data_dir, "docs")
    assert snap is not None
    info = manifest.load(data_dir)["collections"]["docs"]
    client = QdrantClient(":memory:")
    vectorstore.ensure_collection(client, "docs", int(snap.vectors.shape[1]), mode="hybrid")
    documents = [snap.document(r) for r in range(snap.rows)]
    ids = [str(d.metadata.pop("_id")) for d in documents]
    keywords = sparse.encoder(float(info["bm25_average_length"])).embed_documents([d.page_content for d in documents])
    vectorstore.upsert(client, "docs", Points(ids, documents, np.asarray(snap.vectors),
                                              [(list(k.indices), list(k.values)) for k in keywords]))
    return client


def test_filters_keep_search_within_the_named_pages(data_dir: str) -> None:
    embeddings = HashEmbeddings(256)
    vector = embeddings.embed_query("What is Isaac Sim?")
    everywhere = search.find(data_dir, "docs", embeddings, vector, 10, mode="hybrid", text="What is Isaac Sim?")
    assert {d.metadata["source"] for d, _ in everywhere} > {"baking.md"}
    only = search.find(data_dir, "docs", embeddings, vector, 10, mode="hybrid", text="What is Isaac Sim?",
                       scope=Scope(("baking.md",)))
    assert only and {d.metadata["source"] for d, _ in only} == {"baking.md"}
    scores = [s for _, s in everywhere]
    assert scores == sorted(scores, reverse=True)  # fused candidates come back best cosine first


@pytest.mark.parametrize("where", [Scope(("baking.md",)), Scope(("isaac-sim.md",), ("Synthetic data",))])
def test_a_scope_admits_the_same_chunks_from_the_snapshot_and_from_qdrant(data_dir: str, where: Scope) -> None:
    embeddings = HashEmbeddings(256)
    question = "How is synthetic data made, and how long is bread baked?"
    vector = embeddings.embed_query(question)
    embedded = search.find(data_dir, "docs", embeddings, vector, 10, mode="hybrid", text=question, scope=where)
    qdrant = qdrant_search.search(qdrant_copy(data_dir), "docs", embeddings, vector, 10, mode="hybrid",
                                  text=question, scope=where)
    assert {d.metadata["chunk_id"] for d, _ in embedded} == {d.metadata["chunk_id"] for d, _ in qdrant}
    assert embedded and {d.metadata["source"] for d, _ in embedded} == set(where.sources)
    for document, _ in embedded if where.headings else []:
        assert set(where.headings) & set(document.metadata["heading_hierarchy"])


def test_a_damaged_snapshot_is_a_retrieval_error_naming_the_fix(data_dir: str) -> None:
    snap = embedded_index.current(data_dir, "docs")
    assert snap is not None
    (snap.folder / "meta.json").write_text("{")
    embedded_index._open.clear()
    embeddings = HashEmbeddings(256)
    with pytest.raises(RetrievalError, match="re-run ingest"):
        search.find(data_dir, "docs", embeddings, embeddings.embed_query("bread"), 5)


def test_an_index_from_before_snapshots_asks_for_a_rebuild(data_dir: str) -> None:
    shutil.rmtree(embedded_index.root(data_dir, "docs"))
    (Path(data_dir) / "qdrant" / "collection" / "docs").mkdir(parents=True)  # what local mode left
    embedded_index._open.clear()
    embeddings = HashEmbeddings(256)
    with pytest.raises(IndexMissingError, match="built by an earlier version.*--recreate"):
        search.find(data_dir, "docs", embeddings, embeddings.embed_query("knead bread dough"), 3, mode="hybrid",
                    text="knead bread dough")


def test_a_running_agent_sees_what_the_next_ingest_added(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "robots.md").write_text("# Robots\n\nA robot arm has joints and a gripper.\n")

    def ingest() -> None:
        ingest_folder(docs, data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                      embedding_model="hash/256", progress=False)

    ingest()
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
    with Agent(Context(embedding_model="hash/256", score_threshold=0.2),
               "memory") as agent:
        before = agent.ask("What does a lidar scanner measure?", "a")
        assert {c["source"] for c in before["citations"]} <= {"robots.md"}
        (docs / "lidar.md").write_text("# Lidar\n\nA lidar scanner measures distance with laser pulses.\n")
        ingest()
        answer = agent.ask("What does a lidar scanner measure?", "b")
    assert answer["status"] == "grounded" and answer["citations"][0]["source"] == "lidar.md"
    # Each ingest published a new snapshot; the one before it stays for readers still holding it.
    snapshots = [p for p in embedded_index.root(tmp_path / "data", "docs").iterdir() if p.is_dir()]
    assert len([p for p in snapshots if not p.name.startswith(".")]) == 2  # .staging: the write log


def synthetic_snapshot(folder: Path, pages: int, rows_per_page: int, dimension: int = 8) -> embedded_index.Snapshot:
    """Write and open a snapshot of `pages` sources with `rows_per_page` random chunks each."""
    folder.mkdir()
    rows = pages * rows_per_page
    vectors = np.random.default_rng(0).standard_normal((rows, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    source_ids = np.repeat(np.arange(pages, dtype=np.int32), rows_per_page)
    lines = [f'{{"id": "{r}", "page_content": "chunk {r}", "metadata": {{"source": "p{r // rows_per_page}"}}}}'
             .encode() for r in range(rows)]
    (folder / "payloads.jsonl").write_bytes(b"".join(lines))
    np.save(folder / "offsets.npy", np.concatenate([[0], np.cumsum([len(line) for line in lines])]))
    np.save(folder / "vectors.npy", vectors)
    np.save(folder / "source_ids.npy", source_ids)
    (folder / "meta.json").write_text(json.dumps({"sources": [f"p{i}" for i in range(pages)], "hybrid": False}))
    return embedded_index.load(folder)


class CountingList(list[str]):
    """A list that counts how often it is walked through or searched."""

    walks = 0

    def __iter__(self) -> Iterator[str]:
        CountingList.walks += 1
        return super().__iter__()

    def __contains__(self, item: object) -> bool:
        CountingList.walks += 1
        return super().__contains__(item)


def test_a_filter_reads_its_page_list_once_not_once_per_page_of_the_index(tmp_path: Path) -> None:
    snap = synthetic_snapshot(tmp_path / "snap", pages=2_000, rows_per_page=3)
    wanted = CountingList(f"p{i}" for i in range(0, 2_000, 2))
    CountingList.walks = 0
    hits = embedded_index.search(snap, [1.0] * 8, 20, sources=wanted)
    assert CountingList.walks <= 2  # was once per source of the snapshot: 2,000 walks of 1,000 names
    assert len(hits) == 20 and {d.metadata["source"] for d, _ in hits} <= set(wanted)
    assert snap.allowed(["p1", "nowhere"], None).nonzero()[0].tolist() == [3, 4, 5]


def test_a_filter_admitting_many_pages_costs_about_what_an_unfiltered_search_costs(tmp_path: Path) -> None:
    snap = synthetic_snapshot(tmp_path / "snap", pages=20_000, rows_per_page=5)
    wanted = [f"p{i}" for i in range(0, 20_000, 2)]
    query = [1.0] * 8

    def best_of(runs: int, **scope: Any) -> float:
        """The fastest of a few searches: the least disturbed by other work on the machine."""
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            embedded_index.search(snap, query, 10, **scope)
            times.append(time.perf_counter() - started)
        return min(times)

    best_of(1, sources=wanted)  # the source map is built on the first filtered search, once per snapshot
    unfiltered, filtered = best_of(5), best_of(5, sources=wanted)
    # Measured together, so a busy machine slows both: ~1x now; the set built per page made it ~1,000x.
    assert filtered < 20 * unfiltered + 0.005, (filtered, unfiltered)


def test_the_sampled_keyword_ranking_finds_exactly_the_best_scores() -> None:
    rng = np.random.default_rng(7)
    for size, matched in ((50, 0.5), (5_000, 0.02), (200_000, 0.6), (200_000, 0.0001)):
        scores = np.where(rng.random(size) < matched, rng.integers(1, 40, size) / 4, 0.0).astype(np.float32)
        best = embedded_index._top_matched(scores, 30)
        positive = np.sort(scores[scores > 0])[::-1][:30]
        assert len(best) == len(positive) and np.all(scores[best] > 0)  # never a row that matched no term
        assert scores[best].tolist() == positive.tolist()  # the same scores, best first (ties share a value)


def one_page_index(tmp_path: Path, name: str, text: str) -> str:
    """Ingest one page with the hash embedder; return the data folder."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / name).write_text(text)
    ingest_folder(tmp_path / "docs", data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    return str(tmp_path / "data")


@pytest.fixture
def lead_in_index(tmp_path: Path) -> str:
    """Index one page that chunking cuts between a lead-in sentence and the code block it introduces."""
    return one_page_index(tmp_path, "config.md", LEAD_IN_PAGE)


def test_the_chunk_after_a_lead_in_comes_from_the_snapshot_and_from_qdrant(lead_in_index: str) -> None:
    snap = embedded_index.current(lead_in_index, "docs")
    assert snap is not None and snap.rows == 2
    assert snap.document(0).metadata["text"].rstrip().endswith("`get_config`:")
    places = [("config.md", 1), ("config.md", 2), ("other.md", 0)]
    embedded = search.chunks_at(lead_in_index, "docs", places)
    assert list(embedded) == [("config.md", 1)]
    assert embedded[("config.md", 1)]["text"].startswith("```python\n>>> is_configured()")
    served = qdrant_search.chunks_at(qdrant_copy(lead_in_index), "docs", places)
    assert {p: (m["text"], m["heading_hierarchy"]) for p, m in served.items()} == \
        {p: (m["text"], m["heading_hierarchy"]) for p, m in embedded.items()}


def test_an_answer_quotes_a_lead_in_with_the_block_the_next_chunk_opens_with(
        lead_in_index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", lead_in_index)
    with Agent(Context(embedding_model="hash/256", score_threshold=0.05), InMemorySaver()) as agent:
        out = agent.ask("How can a library find out whether the application configured the logger?")
    assert out["status"] == "grounded"
    assert "with `is_configured` and `get_config`:" in out["answer"]
    assert ">>> is_configured()\nFalse" in out["answer"]  # the block, not the lead-in alone
    assert [c["source"] for c in out["citations"]][:1] == ["config.md"]


def test_each_side_of_a_lead_in_cut_from_its_block_is_given_the_other(
        lead_in_index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", lead_in_index)
    with Agent(Context(embedding_model="hash/256", score_threshold=0.05), InMemorySaver()) as agent:
        agent.ask("How can a library find out whether the application configured the logger?", "t")
        retrieved = agent.graph.get_state({"configurable": {"thread_id": "t"}}).values["retrieved"]
    text = {c["chunk_index"]: c["text"] for c in retrieved}
    lead = "with `is_configured` and `get_config`:"
    assert text[0].rstrip().endswith("<class 'LoggerFactory'>\n```")  # the lead-in's chunk, with the block
    assert text[1].startswith("A library can find out") and f"{lead}\n\n```python" in text[1]  # the block's, led in


def test_an_answer_quotes_the_piece_of_a_long_example_whole_with_the_rest_of_its_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = one_page_index(tmp_path, "client-certificate.md", SPLIT_CODE_PAGE)
    snap = embedded_index.current(data, "docs")
    assert snap is not None and snap.rows > 2  # the example is cut into pieces
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", data)
    with Agent(Context(embedding_model="hash/256", score_threshold=0.05), InMemorySaver()) as agent:
        out = agent.ask("Where do the client key and the client certificate go: const tls, connect: tls?")
    assert out["status"] == "grounded"
    # The options and the call that takes them, in one block that reads whole: no piece opening with "  })".
    assert "connect: tls\n  })" in out["answer"]
    assert "```js\n  })" not in out["answer"]


def test_every_piece_of_a_long_table_keeps_its_header_and_is_quoted_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = one_page_index(tmp_path, "errors.md", SPLIT_TABLE_PAGE)
    pieces = search.chunks_at(data, "docs", [("errors.md", n) for n in range(1, 9)])
    assert pieces  # chunking cut the table
    assert all(p["text"].startswith("| Error | Code | Reason |\n| --- | --- | --- |\n") for p in pieces.values())
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", data)
    with Agent(Context(embedding_model="hash/256", score_threshold=0.05), InMemorySaver()) as agent:
        out = agent.ask("Which code does HookError have? `HookError` `ERR_HOOK`")
    assert out["status"] == "grounded" and "`ERR_HOOK`" in out["answer"]
    # Every table quoted has its header row and rule: rows alone render as text and name no column.
    tables = [part for part in out["answer"].split("\n\n") if part.lstrip().startswith("|")]
    assert tables and all(t.lstrip().startswith("| Error | Code | Reason |\n| --- | --- | --- |") for t in tables)
