"""Confidence: how likely a shown answer holds what was asked, or, when refused, that the best section answers it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from logic.lexical import terms

# p = sigmoid(INTERCEPT + GATE_WEIGHT × (gate_score − threshold) + MARGIN_WEIGHT × margin) × support.
# Fitted by `benchmarks/confidence.py` (logistic regression, L2 = FIT_L2, Newton's method) on the
# `rag-agent eval --report` records of the shared textbook sets: 44 in-scope and 245 out-of-scope turns,
# bundled embedder, gate 0.48 (docs/benchmarks.md, "Confidence"). A turn counts as correct when it is in
# scope and its first citation (the best retrieved chunk when refused) comes from a gold file. The gate's
# score carries almost all the signal; the margin adds little there (log-loss 0.0502 → 0.0497) but is
# kept for corpora where several sections compete closely.
INTERCEPT = -2.00
GATE_WEIGHT = 11.44
MARGIN_WEIGHT = 1.46
FIT_L2 = 0.1


# A confidence below this is more likely wrong than right (the confidence is a calibrated probability):
# the answer is still shown, flagged, so a UI and the logs can mark it.
FLAG_BELOW = 0.5


def flag_reason(value: float, unsupported: list[str], removed: bool) -> str:
    """Say why an answer should be marked as uncertain ("" when it should not)."""
    reasons = []
    if value < FLAG_BELOW:
        reasons.append("low confidence that the cited sections answer the question")
    if unsupported:
        done = "were removed" if removed else "are kept with a note"
        reasons.append(f"{len(unsupported)} sentence(s) the sources do not support {done}")
    return "; ".join(reasons)


def margin(relevances: Sequence[float]) -> float:
    """Return how far the best chunk's ranking score leads the next one's (0 with fewer than two)."""
    return relevances[0] - relevances[1] if len(relevances) >= 2 else 0.0


def features(gate_score: float | None, threshold: float | None, relevances: Sequence[float]) -> tuple[float, float]:
    """Return (retrieval confidence above the gate's threshold, ranking margin)."""
    return (gate_score or 0.0) - (threshold or 0.0), margin(relevances)


def confidence(gate_score: float | None, threshold: float | None, relevances: Sequence[float],
               support: float = 1.0) -> float:
    """Return the turn's confidence in [0, 1]; nothing retrieved is no confidence at all."""
    if gate_score is None or not relevances:
        return 0.0
    gate, lead = features(gate_score, threshold, relevances)
    # Grounding cannot be fitted offline (quoted answers are always supported), so an answer whose
    # sentences are only partly supported scales down the retrieval estimate by that share.
    return round(_sigmoid(INTERCEPT + GATE_WEIGHT * gate + MARGIN_WEIGHT * lead) * support, 3)


# An answer's confidence: p(the answer holds what was asked) = sigmoid(ANSWER_INTERCEPT + ANSWER_GATE_WEIGHT ×
# (gate_score − threshold) + ANSWER_STATED_WEIGHT × stated) × support, where `stated` is the share of the question's
# terms the answer itself states. Fitted by `benchmarks/confidence.py --sites-dump` on every answered turn of the
# four tuning sites (benchmarks/sites.py --dump; an answer is right when it holds at least half its answer
# keywords, an answered near miss is wrong), checked leaving each site out in turn (docs/benchmarks.md,
# "Confidence across sites"). Retrieval alone says little here (the gate's AUC for a right answer is 0.65): a
# passage from the right page often misses the asked line, and an answer that never states the question's terms
# is the commonest miss. Refitted when the offline answer began quoting whole passages (which state more of the
# question's words whether or not they answer it, so `stated` weighs less).
ANSWER_INTERCEPT = -0.33
ANSWER_GATE_WEIGHT = 2.65
ANSWER_STATED_WEIGHT = 0.60


def stated(question: str, answer: str, asked: Sequence[str] | None = None) -> float:
    """Return the share of the question's terms (or of the `asked` ones, when given) the answer states.

    Given `asked` and none of it, nothing was left to state ("Summarize this"): 1.0.
    """
    wanted = set(terms(question) if asked is None else asked)
    if not wanted:
        return 0.0 if asked is None else 1.0
    return len(wanted & set(terms(answer))) / len(wanted)


def answer_confidence(gate_score: float | None, threshold: float | None, question: str, answer: str,
                      support: float = 1.0, asked: Sequence[str] | None = None) -> float:
    """Return how likely a shown answer holds what was asked, in [0, 1] (`asked`: see `stated`)."""
    if gate_score is None:
        return 0.0
    x = ANSWER_INTERCEPT + ANSWER_GATE_WEIGHT * (gate_score - (threshold or 0.0)) \
        + ANSWER_STATED_WEIGHT * stated(question, answer, asked)
    return round(_sigmoid(x) * support, 3)


def _sigmoid(x: float) -> float:
    """Map a log-odds to a probability without overflowing."""
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def fit(rows: Sequence[tuple[Sequence[float], bool]], l2: float = FIT_L2, steps: int = 50) -> list[float]:
    """Fit logistic-regression weights [intercept, *feature weights] by Newton's method with an L2 penalty."""
    width = len(rows[0][0]) + 1
    w = [0.0] * width
    for _ in range(steps):
        grad = [l2 * w[j] if j else 0.0 for j in range(width)]
        hess = [[(l2 if i == j and i else 0.0) for j in range(width)] for i in range(width)]
        for x, y in rows:
            v = [1.0, *x]
            p = _sigmoid(sum(a * b for a, b in zip(w, v, strict=True)))
            for i in range(width):
                grad[i] += (p - y) * v[i]
                for j in range(width):
                    hess[i][j] += p * (1 - p) * v[i] * v[j]
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return w


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a small linear system by Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(n)]
