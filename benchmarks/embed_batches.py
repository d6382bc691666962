"""What the bundled embedder's batch size costs: chunks and passage openings embedded under several word-piece budgets.

    .venv/bin/python benchmarks/embed_batches.py --corpus ../shared/eval/sites/rust-book/corpus
    .venv/bin/python benchmarks/embed_batches.py --corpus docs --chunks 40 --rounds 1   # seconds: a smoke run

The corpus is chunked as ingest chunks it (no index is written); a sample of its chunks and their passages
(the texts the extractive answerer scores, embedded by their openings at ingest) is embedded under each budget
of `onnx_embedder.BATCH_TOKENS`, the budgets rotated round by round so none always runs first. The
vectors are the same under every budget; the figure is the time, as a ratio to the shipped budget's.
8,192 word pieces is what the embedder did before: up to 32 chunks of 256 word pieces a call.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._common import machine, rotations  # noqa: E402
from logic.chunking import chunk_markdown  # noqa: E402
from tools import onnx_embedder, sentence_store  # noqa: E402
from tools.upsert import Settings  # noqa: E402

BUDGETS = [onnx_embedder.BATCH_TOKENS, 1024, 8192]


def sample(corpus: Path, count: int) -> list[str]:
    """Return `count` chunk texts of the corpus's Markdown pages, chosen at random with a fixed seed."""
    settings = Settings()
    texts = [c.embedding_text() for page in sorted(corpus.rglob("*.md"))
             for c in chunk_markdown(page.read_text(encoding="utf-8", errors="replace"), str(page),
                                     settings.chunk_tokens, settings.chunk_overlap)]
    random.Random(7).shuffle(texts)
    return texts[:count]


def main() -> None:
    """Time the budgets and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/eval/sites/rust-book/corpus")
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    chunks = sample(args.corpus, args.chunks)
    passages = list({sentence_store.key(t): t for c in chunks for t in sentence_store.scored_texts(c)}.values())
    model = onnx_embedder.load()
    model.embed_documents(chunks[:8])  # the session's first calls allocate; not part of any side
    print(machine())
    print(f"{len(chunks)} chunks of {args.corpus}, {len(passages)} passages (openings of "
          f"{sentence_store.PASSAGE_TOKENS} word pieces)")
    seconds: dict[int, list[tuple[float, float]]] = {b: [] for b in BUDGETS}
    names = [str(b) for b in BUDGETS]
    for repetition in range(args.rounds):
        for name in rotations(names, repetition):
            onnx_embedder.BATCH_TOKENS = int(name)
            started = time.perf_counter()
            model.embed_documents(chunks)
            middle = time.perf_counter()
            sentence_store.embed(model, passages)
            seconds[int(name)].append((middle - started, time.perf_counter() - middle))
    shipped = BUDGETS[0]
    base_chunks = statistics.median(c for c, _ in seconds[shipped])
    base_passages = statistics.median(p for _, p in seconds[shipped])
    for budget in BUDGETS:
        c = statistics.median(x for x, _ in seconds[budget])
        p = statistics.median(x for _, x in seconds[budget])
        print(f"budget {budget:>5} word pieces: chunks {c:7.2f} s ({c / base_chunks:.2f}x the shipped), "
              f"passages {p:6.2f} s ({p / base_passages:.2f}x), passages / chunks {p / c:.2f}")


if __name__ == "__main__":
    main()
