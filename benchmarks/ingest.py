"""Ingestion cost: the full pipeline against the bare embedder on the same chunks, in one run.

    .venv/bin/python benchmarks/ingest.py [--corpus DIR] [--rounds 2] [--embedder local/all-MiniLM-L6-v2]

Rounds interleave the two measurements (embedder, pipeline, embedder, pipeline, ...) after a warm-up, so
load from other processes on the machine hits both alike; the medians give the ratio. The pipeline run
is a complete `--recreate` ingest into a fresh folder: read, chunk, embed, upsert, manifest, lexicon.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine  # noqa: E402
from logic.chunking import chunk_markdown  # noqa: E402
from tools import vectorstore  # noqa: E402
from tools.embeddings import get_embeddings  # noqa: E402
from tools.ingest import Settings, ingest  # noqa: E402
from tools.sources import collect  # noqa: E402

CORPUS = Path("/work/shared/eval/textbook/corpus")
BATCH = 64


def main() -> None:
    """Measure and print both timings and their ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--embedder", default="local/all-MiniLM-L6-v2")
    args = parser.parse_args()
    embeddings = get_embeddings(args.embedder)
    found = collect(str(args.corpus))
    settings = Settings(progress=False, batch_size=BATCH)
    texts = [c.embedding_text() for s, (_, text) in found.docs.items()
             for c in chunk_markdown(text, s, settings.chunk_tokens, settings.chunk_overlap)]
    print(f"corpus {args.corpus}: {len(found.docs)} documents, {len(texts)} chunks; embedder {args.embedder}")
    print(machine())
    embeddings.embed_documents(texts[:BATCH])  # warm-up: first-call allocations and lazy imports
    embed_times, pipeline_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            start = time.perf_counter()
            for i in range(0, len(texts), BATCH):
                embeddings.embed_documents(texts[i : i + BATCH])
            embed_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            report = ingest(collect(str(args.corpus)), data_dir=Path(tmp) / "data", collection="bench",
                            embeddings=embeddings, embedding_model=args.embedder, recreate=True, settings=settings)
            pipeline_times.append(time.perf_counter() - start)
            vectorstore.close_clients()
            assert report.embedded == len(texts), (report.embedded, len(texts))
            print(f"round {round_ + 1}: embedder {embed_times[-1]:.1f}s, pipeline {pipeline_times[-1]:.1f}s "
                  f"({report.chunks} chunks stored)")
    embed, pipeline = statistics.median(embed_times), statistics.median(pipeline_times)
    print(f"embedder alone : {embed:.1f}s  ({len(texts) / embed:.1f} chunks/s)")
    print(f"full pipeline  : {pipeline:.1f}s  ({len(texts) / pipeline:.1f} chunks/s, "
          f"{len(found.docs) / pipeline:.2f} docs/s)")
    print(f"ratio pipeline/embedder: {pipeline / embed:.3f} (goal <= 1.10)")


if __name__ == "__main__":
    main()
