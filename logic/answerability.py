"""Answerability: do the best sections contain what the question asks for? A small fitted model, not one cosine."""

from __future__ import annotations

import math
from collections.abc import Sequence

from logic.lexical import Lexicon, terms
from logic.types import Chunk

# The gate reads the few best sections, as a reader would before answering.
DEPTH = 3
# Names the fitted model: a manifest threshold calibrated for another gate score is not reused.
GATE_VERSION = "answerability-1"
FEATURES = ("cosine", "coverage", "missing_local", "unknown")
# p(answerable) = sigmoid(INTERCEPT + Σ WEIGHTS[f] × feature f). Fitted by `benchmarks/answerability.py`
# (logistic regression, Newton's method, L2) on public labelled data; see docs/benchmarks.md ("Answerability").
INTERCEPT = -6.0
WEIGHTS = {"cosine": 12.0, "coverage": 2.0, "missing_local": -4.0, "unknown": -3.0}


def _text(chunk: Chunk) -> str:
    """Return what a reader sees of a section: its page title, headings and text."""
    return " ".join([chunk["title"], *chunk["heading_hierarchy"], chunk["text"]])


def features(query: str, best: Sequence[Chunk], lexicon: Lexicon) -> dict[str, float]:
    """Measure the evidence that the best sections answer `query`, each feature in [0, 1] or a cosine.

    - cosine: the best chunk's embedding similarity.
    - coverage: IDF-weighted share of the question's terms found in the best chunk that holds most of them.
    - missing_local: IDF-weighted share of the question's terms the index uses elsewhere but the best
      sections never mention (the asked-for price, version or tool sits on another page, or nowhere near).
    - unknown: IDF-weighted share of the question's terms the index never uses at all.
    """
    query_terms = list(dict.fromkeys(terms(query)))
    top = list(best[:DEPTH])
    if not top:
        return dict.fromkeys(FEATURES, 0.0)
    cosine = max(c["score"] for c in top)
    coverage = max(lexicon.coverage(query_terms, _text(c)) for c in top)
    weights = {t: lexicon.idf(t) for t in query_terms}
    total = sum(weights.values())
    if total <= 0:
        return {"cosine": cosine, "coverage": coverage, "missing_local": 0.0, "unknown": 0.0}
    joined = " ".join(_text(c) for c in top)
    present = {t for t in query_terms if lexicon.coverage([t], joined) > 0}
    local = sum(w for t, w in weights.items() if t not in present and lexicon.df.get(t, 0) > 0) / total
    unknown = sum(w for t, w in weights.items() if t not in present and lexicon.df.get(t, 0) == 0) / total
    return {"cosine": round(cosine, 4), "coverage": round(coverage, 4),
            "missing_local": round(local, 4), "unknown": round(unknown, 4)}


def gate_score(values: dict[str, float]) -> float:
    """Return the fitted probability that the best sections answer the question."""
    x = INTERCEPT + sum(WEIGHTS[name] * values[name] for name in FEATURES)
    return round(_sigmoid(x), 4)


def _sigmoid(x: float) -> float:
    """Map log-odds to a probability without overflowing."""
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))
