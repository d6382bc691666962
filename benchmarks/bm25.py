"""Keyword side alone: fastembed's BM25 (Snowball stems) vs the hand-written encoder it replaced (plural stripping).

    .venv/bin/python benchmarks/bm25.py            # the textbook corpus and question sets
    .venv/bin/python benchmarks/bm25.py --smoke    # one module, a few questions

Both encoders weigh the same chunks (the textbook, chunked as ingest does) with the same BM25
formula (k1 = 1.2, b = 0.75, the corpus's own average length, Qdrant's IDF); only tokenising,
stopwords and stemming differ. Ranking by keyword score alone shows what each contributes to
hybrid candidates: hit@1/hit@5 on the in-scope questions, how often a near-miss or out-of-scope
question still gets a keyword match in its top 5 from a page it does not belong to (it cannot:
they have no gold page, so any match is a distractor the gate must reject), and encoding speed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logic.chunking import chunk_markdown  # noqa: E402
from logic.lexical import terms  # noqa: E402
from tools import sparse  # noqa: E402
from tools.sources import from_folder  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"
K1, B = 1.2, 0.75


class HandWritten:
    """The encoder tools/sparse.py held before: crc32 term ids of logic.lexical.terms (plural 's' stripped)."""

    def __init__(self, texts: list[str]) -> None:
        self.average = max(sum(len(terms(t)) for t in texts) / len(texts), 1.0)

    def document(self, text: str) -> dict[int, float]:
        """Weigh each term by BM25's saturated term frequency."""
        words = terms(text)
        norm = K1 * (1 - B + B * len(words) / self.average)
        counts = Counter(zlib.crc32(w.encode()) for w in words)
        return {i: tf * (K1 + 1) / (tf + norm) for i, tf in counts.items()}

    def query(self, text: str) -> set[int]:
        """Return the query's term ids."""
        return {zlib.crc32(w.encode()) for w in terms(text)}


class FastEmbed:
    """The encoder tools/sparse.py holds now."""

    def __init__(self, texts: list[str]) -> None:
        self.encoder = sparse.encoder(sparse.average_length(texts))

    def document(self, text: str) -> dict[int, float]:
        """Weigh each term as ingest stores it."""
        vector = self.encoder.embed_documents([text])[0]
        return dict(zip(vector.indices, vector.values, strict=True))

    def query(self, text: str) -> set[int]:
        """Return the query's term ids."""
        return set(self.encoder.embed_query(text).indices)


def ranked(docs: list[dict[int, float]], df: Counter[int], query: set[int], k: int) -> list[int]:
    """Return the k best chunks by BM25 with Qdrant's IDF (only chunks with a match)."""
    n = len(docs)
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1) for t in query if df[t]}
    scores = [(sum(idf[t] * d.get(t, 0.0) for t in idf), i) for i, d in enumerate(docs)]
    return [i for s, i in sorted(scores, reverse=True)[:k] if s > 0]


def evaluate(name: str, encoder: Any, chunks: list[tuple[str, str]], sets: dict[str, list[dict[str, Any]]]) -> dict:
    """Encode the chunks, rank every question by keyword score, and return the figures."""
    started = time.perf_counter()
    docs = [encoder.document(text) for _, text in chunks]
    per_chunk_ms = (time.perf_counter() - started) / len(chunks) * 1000
    df: Counter[int] = Counter(t for d in docs for t in d)
    out: dict[str, Any] = {"encoder": name, "encode_ms_per_chunk": round(per_chunk_ms, 3)}
    for set_name, questions in sets.items():
        hits1 = hits5 = matched = 0
        for q in questions:
            top = [chunks[i][0] for i in ranked(docs, df, encoder.query(q["question"]), 5)]
            gold = set(q.get("gold") or [])
            hits1 += bool(top[:1]) and top[0] in gold
            hits5 += bool(gold & set(top))
            matched += bool(top)
        n = max(len(questions), 1)
        if any(q.get("gold") for q in questions):
            out[set_name] = {"hit_at_1": round(hits1 / n, 3), "hit_at_5": round(hits5 / n, 3), "n": len(questions)}
        else:
            out[set_name] = {"with_a_keyword_match": round(matched / n, 3), "n": len(questions)}
    return out


def rows(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines question set."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Print one line of figures per encoder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    corpus = SHARED / "textbook" / "corpus" / ("module-1" if args.smoke else "")
    found = from_folder(corpus)
    chunks = [(s, c.embedding_text()) for s, (_, text) in found.docs.items() for c in chunk_markdown(text, s)]
    prefix = "module-1/" if args.smoke else ""
    load = rows(SHARED / "textbook" / "textbook-questions.jsonl")
    sets = {
        "in scope": [{**q, "gold": [g.removeprefix(prefix) for g in q["gold"]]} for q in load
                     if q.get("gold") and all(g.startswith(prefix) for g in q["gold"])],
        "near miss": rows(SHARED / "textbook" / "textbook-nearmiss.jsonl"),
        "out of scope": rows(SHARED / "ood" / "squad2-ood-questions.jsonl"),
    }
    if args.smoke:
        sets = {k: v[:5] for k, v in sets.items()}
    texts = [t for _, t in chunks]
    print(f"{len(chunks)} chunks from {corpus}")
    results = [evaluate("hand-written (plural strip)", HandWritten(texts), chunks, sets),
               evaluate("fastembed Bm25 (Snowball)", FastEmbed(texts), chunks, sets)]
    for row in results:
        print(json.dumps(row))
    return results


if __name__ == "__main__":
    main()
