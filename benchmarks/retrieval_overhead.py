"""Retrieval through the project's search + re-ranking path vs a raw qdrant-client query_points.

Run from the project root (see docs/benchmarks-overhead.md for what the output means):

    .venv/bin/python -m benchmarks.retrieval_overhead                            # 1k, 10k, 20k chunks
    .venv/bin/python -m benchmarks.retrieval_overhead --sizes 1000 --queries 10  # quick look
    .venv/bin/python -m benchmarks.retrieval_overhead --sizes 1000 --profile 12  # where `project` spends time

One synthetic collection in Qdrant local mode (a temporary folder) grows through the sizes:
random unit 384-d vectors with payloads shaped like tools/ingest.py writes them (page_content +
metadata with a ~150-word text, title, heading_hierarchy, source...). Queries are precomputed
vectors (a stored vector plus noise) with a question built from that chunk's words, so the
embedder is excluded from every side. Per query the sides run back to back, order rotated:

- ``raw k=5``: ``client.query_points(limit=5, with_payload=True)``, what a caller needing the
  same top 5 with their payloads would write.
- ``raw k=30``: the same with the project's candidate count.
- ``project``: the retrieve node's path after embedding: ``vectorstore.open_client``,
  ``vectorstore.search`` for ``ranking.candidates_for(5)`` = 30 candidates, ``lexical.load``,
  ``to_chunk`` for every hit and ``ranking.rank`` down to 5.
- ``project search``: ``vectorstore.search`` for 30 alone (the langchain-qdrant wrapper, no
  conversion or re-ranking), compared with ``raw k=30``.
- ``project, real embedder`` (unless --no-model): ``project`` again but handing ``search`` the
  bundled embedder object, as the retrieve node does; the query is still precomputed, so any
  extra time is what the wrapper does with the embedder.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Set before the embedder is imported: a benchmark must never reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from qdrant_client import QdrantClient, models  # noqa: E402

from benchmarks._common import machine, median_ratio, ms, ratio_of_medians, rotations, verdict  # noqa: E402
from logic import lexical, ranking  # noqa: E402
from nodes.retrieve import to_chunk  # noqa: E402
from tools import lexicon_store, vectorstore  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402

DIMENSION = 384
TOP_K = 5
COLLECTION = "bench"
GOAL = 1.2
WORDS_PER_CHUNK = 150
CHUNKS_PER_PAGE = 12
SYLLABLES = ("ro", "bo", "sim", "na", "tor", "ga", "ze", "lid", "ar", "kin", "mo", "tion", "plan", "ner",
             "sen", "sor", "del", "ta", "qu", "at", "gaz", "ebo", "nav", "ig", "lo", "cal", "map", "ping")


class FixedEmbeddings(Embeddings):
    """Return one constant unit vector: satisfies the wrapper's dimension check without a model."""

    def __init__(self, dimension: int = DIMENSION) -> None:
        self.vector = [1.0 / dimension**0.5] * dimension

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Return the constant vector per text."""
        return [self.vector for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        """Return the constant vector."""
        return self.vector


@dataclass
class Corpus:
    """Synthetic chunks, generated deterministically so every run measures the same data."""

    vectors: np.ndarray
    texts: list[str]
    rng: np.random.Generator

    @classmethod
    def generate(cls, size: int, seed: int) -> Corpus:
        """Draw `size` unit vectors and ~150-word texts from a fixed vocabulary."""
        rng = np.random.default_rng(seed)
        vectors = rng.standard_normal((size, DIMENSION)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        # Zipf-like word frequencies, as in prose: a few words everywhere, most words rare.
        vocabulary = np.array(["".join(rng.choice(SYLLABLES, size=rng.integers(2, 4))) for _ in range(4000)])
        weights = 1.0 / np.arange(1, len(vocabulary) + 1)
        words = rng.choice(vocabulary, size=(size, WORDS_PER_CHUNK), p=weights / weights.sum())
        return cls(vectors, [" ".join(row) for row in words], rng)


def payload(index: int, text: str) -> tuple[str, dict[str, Any]]:
    """Return a point id and a payload shaped like tools/ingest.py's (page_content + metadata)."""
    page, position = divmod(index, CHUNKS_PER_PAGE)
    source = f"module-{page % 4 + 1}/page-{page}.md"
    title = f"Page {page} {text.split(' ', 1)[0]}"
    headings = [f"Section {position // 3}", f"Topic {position}"]
    point_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{source}#{position}"))
    metadata = {
        "chunk_id": point_id,
        "source": source,
        "source_url": f"https://docs.example.com/{source[:-3]}#topic-{position}",
        "title": title,
        "heading_hierarchy": headings,
        "anchor": f"topic-{position}",
        "chunk_index": position,
        "token_count": 200,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "text": text,
    }
    # Same page_content as Passage.embedding_text(): the heading path, a blank line, the body.
    return point_id, {"page_content": f"{' > '.join([title, *headings])}\n\n{text}", "metadata": metadata}


def grow(client: QdrantClient, corpus: Corpus, start: int, stop: int, batch: int) -> None:
    """Upsert chunks [start, stop) in batches (local mode commits every point to SQLite)."""
    for first in range(start, stop, batch):
        last = min(first + batch, stop)
        ids, payloads = zip(*(payload(i, corpus.texts[i]) for i in range(first, last)), strict=True)
        client.upsert(COLLECTION, points=models.Batch(ids=list(ids), vectors=corpus.vectors[first:last].tolist(),
                                                      payloads=list(payloads)), wait=True)


def queries(corpus: Corpus, size: int, count: int) -> list[tuple[list[float], str]]:
    """Return (vector, question) pairs aimed at random stored chunks: their vector plus noise."""
    out = []
    for target in corpus.rng.integers(0, size, count):
        noisy = corpus.vectors[target] + 0.05 * corpus.rng.standard_normal(DIMENSION).astype(np.float32)
        words = corpus.rng.choice(corpus.texts[target].split(), size=4, replace=False)
        out.append(((noisy / np.linalg.norm(noisy)).tolist(), f"How do I use {' '.join(words)}?"))
    return out


Side = Callable[[list[float], str], list[str]]


def make_sides(data_dir: Path, client: QdrantClient, model: Embeddings | None) -> dict[str, Side]:
    """Build each side; every side returns the chunk ids it would hand on, best first."""
    fixed = FixedEmbeddings()
    candidates = ranking.candidates_for(TOP_K)

    def raw(k: int) -> Side:
        def run(vector: list[float], _question: str) -> list[str]:
            points = client.query_points(COLLECTION, query=vector, limit=k, with_payload=True,
                                         with_vectors=False).points
            return [str((p.payload or {})["metadata"]["chunk_id"]) for p in points]

        return run

    def project(embeddings: Embeddings) -> Side:
        def run(vector: list[float], question: str) -> list[str]:
            # The retrieve node's lines after `embed_query`, in the same order.
            store = vectorstore.open_client(data_dir)
            hits = vectorstore.search(store, COLLECTION, embeddings, vector, candidates)
            terms = lexicon_store.load(data_dir, COLLECTION)
            assert terms is not None
            chunks, _confidence = ranking.rank(question, [to_chunk(d.metadata, s) for d, s in hits], terms, TOP_K)
            return [c["chunk_id"] for c in chunks]

        return run

    def project_search(vector: list[float], _question: str) -> list[str]:
        hits = vectorstore.search(client, COLLECTION, fixed, vector, candidates)
        return [str(d.metadata["chunk_id"]) for d, _ in hits]

    sides: dict[str, Side] = {
        f"raw k={TOP_K}": raw(TOP_K),
        f"raw k={candidates}": raw(candidates),
        "project": project(fixed),
        "project search": project_search,
    }
    if model is not None:
        sides["project, real embedder"] = project(model)
    return sides


def measure(sides: dict[str, Side], workload: list[tuple[list[float], str]], warmup: int) -> dict[str, list[float]]:
    """Run every side on every query back to back (rotated order); check they agree; return seconds."""
    names = list(sides)
    times: dict[str, list[float]] = {name: [] for name in names}
    candidates = f"raw k={ranking.candidates_for(TOP_K)}"
    for turn, (vector, question) in enumerate([*workload[:warmup], *workload]):
        ids: dict[str, list[str]] = {}
        for name in rotations(names, turn):
            start = time.perf_counter()
            ids[name] = sides[name](vector, question)
            if turn >= warmup:
                times[name].append(time.perf_counter() - start)
        # Honesty checks: the wrapper returns exactly raw's neighbours; re-ranking only reorders them.
        assert ids["project search"] == ids[candidates], "wrapper and raw disagree on the neighbours"
        assert len(ids["project"]) == TOP_K and set(ids["project"]) <= set(ids[candidates])
        assert ids.get("project, real embedder", ids["project"]) == ids["project"]
    return times


def p90(values: list[float]) -> float:
    """Return the 90th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[round(0.9 * (len(ordered) - 1))]


@dataclass
class Row:
    """One size's headline figures for the summary."""

    size: int
    raw: float
    project: float
    ratio: float
    wrapper_ratio: float
    rank_ms: float
    model_ms: float | None


def report(size: int, times: dict[str, list[float]]) -> Row:
    """Print one size's table and its ratios; return the figures for the summary."""
    candidates = ranking.candidates_for(TOP_K)
    raw_top, raw_candidates = times[f"raw k={TOP_K}"], times[f"raw k={candidates}"]
    fetched = {f"raw k={TOP_K}": f"{TOP_K}", f"raw k={candidates}": f"{candidates}",
               "project": f"{candidates} -> rank -> {TOP_K}", "project search": f"{candidates}",
               "project, real embedder": f"{candidates} -> rank -> {TOP_K}"}
    print(f"  {'side':<24} {'fetches k':<16} {'median ms':>10} {'p90 ms':>8} {'x raw k=5':>10} {'x raw k=30':>11}")
    for name, values in times.items():
        print(f"  {name:<24} {fetched[name]:<16} {ms(statistics.median(values)):>10} {ms(p90(values)):>8} "
              f"{median_ratio(values, raw_top):>9.3f}x {median_ratio(values, raw_candidates):>10.3f}x")
    ratio = median_ratio(times["project"], raw_top)
    wrapper = median_ratio(times["project search"], raw_candidates)
    rank_ms = statistics.median([p - s for p, s in zip(times["project"], times["project search"], strict=True)])
    model = times.get("project, real embedder")
    model_ms = statistics.median([m - p for m, p in zip(model, times["project"], strict=True)]) if model else None
    print(f"  project (k={candidates} + re-rank to {TOP_K}) vs raw k={TOP_K}: {ratio:.3f}x "
          f"(ratio of medians {ratio_of_medians(times['project'], raw_top):.3f}x) -> {verdict(ratio, GOAL)}")
    print(f"  project search without re-ranking vs raw at the same candidate count (k={candidates}): {wrapper:.3f}x "
          f"(ratio of medians {ratio_of_medians(times['project search'], raw_candidates):.3f}x)")
    print(f"  converting + re-ranking {candidates} hits adds {ms(rank_ms)} ms (median paired difference)"
          + (f"; the real embedder object adds {ms(model_ms)} ms per search" if model_ms is not None else ""))
    return Row(size, statistics.median(raw_top), statistics.median(times["project"]), ratio, wrapper, rank_ms,
               model_ms)


def profile_side(side: Side, workload: list[tuple[list[float], str]], top: int) -> None:
    """Print the cProfile functions with the most own time over the workload, to show where time goes."""
    profiler = cProfile.Profile()
    profiler.enable()
    for vector, question in workload:
        side(vector, question)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    print(f"\n  cProfile of `project` over {len(workload)} queries, top {top} by own time:")
    stats.sort_stats("tottime").print_stats(top)
    # Cumulative time per step of the path: the project's tools, the wrapper, the client.
    print(f"  top {top} by cumulative time among the project's tools, langchain-qdrant and qdrant-client:")
    stats.sort_stats("cumulative").print_stats("tools/|nodes/|langchain_qdrant|qdrant_client/qdrant_client", top)


def sizes_arg(text: str) -> list[int]:
    """Parse "1000,10000,20000" into ascending sizes."""
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if not values or values[0] < 2 * ranking.candidates_for(TOP_K):
        raise argparse.ArgumentTypeError("sizes must be integers >= 60, comma-separated")
    return values


@dataclass
class Collection:
    """The growing benchmark collection and where it lives."""

    data_dir: Path
    client: QdrantClient


def skip_fsync(client: QdrantClient) -> None:
    """Stop local mode's SQLite file from fsyncing every point while the benchmark builds it.

    Local mode commits each upserted point separately, so 20k points mean 20k fsyncs (minutes on a
    busy disk). The file is throwaway and only read back on reopen: searches run on the in-memory
    numpy copy, so this changes build time only, never what is measured. Reaches into qdrant-client
    internals, hence the fallback to the slow path if they move.
    """
    try:
        local: Any = client._client
        local.collections[COLLECTION].storage.storage.execute("PRAGMA synchronous = OFF")
    except (AttributeError, KeyError) as exc:
        print(f"(could not turn off fsync for the build, it will be slower: {exc!r})")


@contextmanager
def open_collection(folder: Path) -> Iterator[Collection]:
    """Create the collection with the project's own helpers (cosine, 384-d) in a temp folder."""
    client = vectorstore.open_client(folder)
    vectorstore.ensure_collection(client, COLLECTION, DIMENSION)
    skip_fsync(client)
    try:
        yield Collection(folder, client)
    finally:
        vectorstore.close_clients()


def main(argv: list[str] | None = None) -> int:
    """Grow the collection through the sizes, time the sides at each, print tables and the verdict."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[1000, 10_000, 20_000], help="default 1000,10000,20000")
    parser.add_argument("--queries", type=int, default=40, help="timed queries per size (default 40)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed queries per size first (default 5)")
    parser.add_argument("--batch", type=int, default=1000, help="points per upsert call (default 1000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-model", action="store_true", help="skip the side that loads the bundled embedder")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile `project` at the first size and print the top N functions")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    print(machine())
    print(f"Qdrant local mode, cosine, {DIMENSION}-d random unit vectors, ingest-shaped payloads "
          f"(~{WORDS_PER_CHUNK}-word text); top_k={TOP_K}, project fetches ranking.candidates_for({TOP_K}) = "
          f"{ranking.candidates_for(TOP_K)}; query vectors precomputed: embedding excluded from every side")
    model = None if args.no_model else get_embeddings(LOCAL_MODEL)
    corpus = Corpus.generate(args.sizes[-1], args.seed)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        # The collection grows 1k -> 10k -> 20k, so the largest size is upserted once, not three times.
        with open_collection(Path(tmp)) as collection:
            with warnings.catch_warnings():
                # Local mode warns above 20k points that a server would be faster; that is known here.
                warnings.simplefilter("ignore", UserWarning)
                built = 0
                for size in args.sizes:
                    began = time.perf_counter()
                    grow(collection.client, corpus, built, size, args.batch)
                    built = size
                    # Term statistics recounted over the whole collection, as ingest does after each change.
                    terms = lexical.build(vectorstore.iter_texts(collection.client, COLLECTION))
                    lexicon_store.save(collection.data_dir, COLLECTION, terms)
                    print(f"\n{size} chunks (upsert + lexicon {time.perf_counter() - began:.0f} s), "
                          f"{args.queries} queries + {args.warmup} warm-up, sides interleaved:")
                    sides = make_sides(collection.data_dir, collection.client, model)
                    times = measure(sides, queries(corpus, size, args.warmup + args.queries), args.warmup)
                    rows.append(report(size, times))
                    if args.profile and size == args.sizes[0]:
                        profile_side(sides["project"], queries(corpus, size, args.queries), args.profile)
    print("\nSummary (medians; ratios are medians of per-query paired ratios):")
    print(f"  {'chunks':>7} {'raw k=5 ms':>11} {'project ms':>11} {'project/raw':>12} {'search/raw@30':>14} "
          f"{'re-rank ms':>11} {'embedder obj ms':>16}")
    for row in rows:
        model_cell = ms(row.model_ms) if row.model_ms is not None else "-"
        print(f"  {row.size:>7} {ms(row.raw):>11} {ms(row.project):>11} {row.ratio:>11.3f}x "
              f"{row.wrapper_ratio:>13.3f}x {ms(row.rank_ms):>11} {model_cell:>16}")
    worst = max(row.ratio for row in rows)
    print(f"\nproject vs raw query_points, worst size: {verdict(worst, GOAL)}")
    print(f"runtime: {time.perf_counter() - start:.0f} s")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
