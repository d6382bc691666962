"""Coverage gaps: unanswered and low-confidence questions grouped by topic, with the sections the docs do have."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import Any

from logic.lexical import STOPWORDS, terms

# Cosine distance below which two groups of questions merge (average linkage). Measured on the bundled
# embedder with paraphrase families of the shared textbook's near-miss questions (docs/records.md):
# tighter splits one ask worded two ways, looser merges different asks about the same product.
DISTANCE_THRESHOLD = 0.65
# Words in this share of the gap questions or more ("how do I", "ROS 2") say nothing about a topic.
COMMON_SHARE = 0.1
# Below this many questions, shares of words are too coarse to call any word common.
MIN_FOR_COMMON = 10
_WORD = re.compile(r"[A-Za-z0-9_+.-]+")
_LABEL_WORD = re.compile(r"\b[A-Za-z][A-Za-z0-9_.+-]+\b")
EXAMPLES = 5
SECTIONS = 3
LABEL_TERMS = 3
Embed = Callable[[list[str]], list[list[float]]]


def is_far_off(record: dict[str, Any], vocabulary: Collection[str] | None) -> bool:
    """Tell whether an unanswered question is about something else entirely, not a gap in the docs.

    Judged off-topic by the chat model, or (offline too) none of its content words occurs anywhere in the
    indexed docs: the gate's lexical-coverage feature at its floor, for the whole index rather than one section.
    """
    if record["status"] != "not_found":
        return False
    if record.get("not_found_reason") == "out_of_scope_intent":
        return True
    words = terms(record["question"])
    return vocabulary is not None and bool(words) and not any(w in vocabulary for w in words)


def is_gap(record: dict[str, Any], vocabulary: Collection[str] | None = None) -> bool:
    """Tell whether a turn shows a gap: a question about these docs refused for lack of content.

    An answer given with low confidence is not a gap: its page often exists and the answer quoted the wrong
    part of it, so it is listed under the possibly wrong answers, not among the pages to write.
    """
    return record["status"] == "not_found" and not is_far_off(record, vocabulary)


def distinctive(questions: list[str]) -> list[str]:
    """Return each question without the words common to most of them (the question itself if nothing is left)."""
    if len(questions) < MIN_FOR_COMMON:
        return questions
    shares: Counter[str] = Counter()
    for question in questions:
        shares.update({w.lower() for w in _WORD.findall(question)})
    common = {w for w, n in shares.items() if n / len(questions) >= COMMON_SHARE}
    kept = [" ".join(w for w in _WORD.findall(q) if w.lower() not in common) for q in questions]
    return [k or q for k, q in zip(kept, questions, strict=True)]


def topic_vectors(questions: list[str], embed: Embed) -> list[list[float]]:
    """Embed each question twice, whole and by its distinctive words, and join both unit vectors.

    The whole question keeps what it asks ("how much does X cost" near "price of Y"); the distinctive
    words keep what it is about, so the shared "how do I … in ROS 2" does not pull different tools together.
    """
    import numpy as np

    vectors = np.asarray(embed(questions + distinctive(questions)), dtype=float)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
    whole, focus = vectors[: len(questions)], vectors[len(questions):]
    return [list(row) for row in np.hstack([whole, focus]) / np.sqrt(2)]


def cluster(vectors: Sequence[Sequence[float]], threshold: float = DISTANCE_THRESHOLD) -> list[int]:
    """Return a group label per vector: agglomerative clustering on cosine distance, cut at `threshold`.

    Average linkage, merging the closest pair of groups while they are closer than `threshold` (what
    scikit-learn's AgglomerativeClustering does with these settings), in numpy: the report then works on
    the default install. A window's gap questions number in the hundreds, so the O(n³) merge loop is fine.
    """
    import numpy as np

    n = len(vectors)
    if n < 2:
        return [0] * n
    unit = np.asarray(vectors, dtype=float)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True).clip(min=1e-12)
    distance = 1.0 - unit @ unit.T
    np.fill_diagonal(distance, np.inf)
    size = np.ones(n)
    label = list(range(n))
    alive = np.ones(n, dtype=bool)
    while alive.sum() > 1:
        i, j = np.unravel_index(int(np.argmin(distance)), distance.shape)
        if distance[i, j] >= threshold:
            break
        # Lance-Williams update for average linkage: the merged group's distance is the size-weighted mean.
        merged = (size[i] * distance[i] + size[j] * distance[j]) / (size[i] + size[j])
        distance[i, :], distance[:, i] = merged, merged
        distance[i, i] = np.inf
        distance[j, :], distance[:, j] = np.inf, np.inf
        size[i] += size[j]
        alive[j] = False
        label = [int(i) if x == j else x for x in label]
    order = {old: new for new, old in enumerate(dict.fromkeys(label))}
    return [order[x] for x in label]


def label_topics(groups: list[list[str]]) -> list[str]:
    """Name each group by its most distinctive words (TF-IDF over groups, each group one document)."""
    import math

    docs = [Counter(w.lower() for w in _LABEL_WORD.findall(" ".join(questions)) if w.lower() not in STOPWORDS)
            for questions in groups]
    df = Counter(w for doc in docs for w in doc)
    labels = []
    for doc in docs:
        # Sublinear term frequency times smoothed IDF, as TfidfVectorizer(sublinear_tf=True) weighs them.
        weight = {w: (1 + math.log(n)) * (math.log((1 + len(docs)) / (1 + df[w])) + 1) for w, n in doc.items()}
        top = sorted(weight, key=lambda w: (-weight[w], w))[:LABEL_TERMS]
        labels.append(" / ".join(top) or "(unnamed)")
    return labels


def _nearest(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the sections the group's turns were pointed to most often (best score breaks ties)."""
    counts: Counter[str] = Counter()
    best: dict[str, dict[str, Any]] = {}
    for record in members:
        for section in record.get("sources") or []:
            key = section.get("title") or section.get("source_url", "")  # one entry per page › heading
            counts[key] += 1
            if key not in best or section.get("score", 0) > best[key].get("score", 0):
                best[key] = section
    ranked = sorted(counts, key=lambda k: (-counts[k], -best[k].get("score", 0)))[:SECTIONS]
    return [{"title": best[k].get("title", ""), "source_url": best[k].get("source_url", ""), "turns": counts[k],
             "score": best[k].get("score")} for k in ranked]


def coverage_gaps(records: list[dict[str, Any]], embed: Embed, threshold: float = DISTANCE_THRESHOLD,
                  vocabulary: Collection[str] | None = None) -> list[dict[str, Any]]:
    """Group the gap turns by topic, largest group first, each with examples and nearest sections."""
    gaps = [r for r in records if is_gap(r, vocabulary) and r["question"].strip()]
    if not gaps:
        return []
    labels = cluster(topic_vectors([r["question"] for r in gaps], embed), threshold)
    members: dict[int, list[dict[str, Any]]] = {}
    for label, record in zip(labels, gaps, strict=True):
        members.setdefault(label, []).append(record)
    ordered = sorted(members.values(), key=lambda group: (-len(group), group[0]["finished_at"]))
    questions = [[r["question"] for r in group] for group in ordered]
    names = label_topics(questions)
    return [{
        "topic": name,
        "count": len(group),
        "examples": list(dict.fromkeys(asked))[:EXAMPLES],
        "turn_ids": [r["turn_id"] for r in group],
        "nearest_sections": _nearest(group),
    } for name, group, asked in zip(names, ordered, questions, strict=True)]


LOW_CONFIDENCE = 0.5  # the widget's "Low confidence" band
REPHRASED = 0.8  # cosine of a question with the one before it on the thread: asked again in other words


def wrong_answer_candidates(records: list[dict[str, Any]], feedback: list[dict[str, Any]],
                            embed: Embed) -> list[dict[str, Any]]:
    """Answered turns that may be wrong: rated down, low confidence, flagged, or asked again right after."""
    import numpy as np

    reasons: dict[str, list[str]] = {}
    for row in feedback:
        if row.get("rating", 0) < 0:
            reasons.setdefault(row["turn_id"], []).append("thumbs-down")
    answered = [r for r in records if r["status"] == "grounded"]
    for r in answered:
        if r.get("flagged"):
            reasons.setdefault(r["turn_id"], []).append("flagged")
        elif r.get("confidence") is not None and r["confidence"] < LOW_CONFIDENCE:
            reasons.setdefault(r["turn_id"], []).append("low confidence")
    # The next question on the same thread saying the same thing: the reader did not get what they asked.
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(records, key=lambda r: r["finished_at"]):
        by_thread.setdefault(r["thread_id"], []).append(r)
    for turns in by_thread.values():
        pairs += [(a, b) for a, b in zip(turns, turns[1:], strict=False)
                  if a["status"] == "grounded" and a["question"].strip() and b["question"].strip()]
    if pairs:
        vectors = np.asarray(embed([a["question"] for a, _ in pairs] + [b["question"] for _, b in pairs]), dtype=float)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
        first, then = vectors[: len(pairs)], vectors[len(pairs):]
        for (a, b), similarity in zip(pairs, (first * then).sum(axis=1), strict=True):
            if similarity >= REPHRASED:
                reasons.setdefault(a["turn_id"], []).append(f"asked again: “{b['question']}”")
    known = {r["turn_id"]: r for r in records}
    return [{"turn_id": t, "question": known[t]["question"], "confidence": known[t].get("confidence"),
             "reasons": why, "sources": [s.get("source_url", "") for s in known[t].get("sources") or []][:3]}
            for t, why in reasons.items() if t in known and known[t]["status"] == "grounded"]
