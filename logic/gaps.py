"""Coverage gaps: unanswered and low-confidence questions grouped by topic, with the sections the docs do have."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

# Cosine distance below which two groups of questions merge (average linkage). Measured on the bundled
# embedder with paraphrase families of the shared textbook's near-miss questions (docs/records.md):
# tighter splits one ask worded two ways, looser merges different asks about the same product.
DISTANCE_THRESHOLD = 0.65
# Words in this share of the gap questions or more ("how do I", "ROS 2") say nothing about a topic.
COMMON_SHARE = 0.1
# Below this many questions, shares of words are too coarse to call any word common.
MIN_FOR_COMMON = 10
_WORD = re.compile(r"[A-Za-z0-9_+.-]+")
EXAMPLES = 5
SECTIONS = 3
LABEL_TERMS = 3
Embed = Callable[[list[str]], list[list[float]]]


def is_gap(record: dict[str, Any]) -> bool:
    """Tell whether a turn shows a gap: a question refused for lack of content, or answered unsure."""
    if record["status"] == "not_found":
        return record.get("not_found_reason") != "out_of_scope_intent"  # the model judged it off-topic
    return bool(record["status"] == "grounded" and record.get("flagged"))


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
    """Return a group label per vector: agglomerative clustering on cosine distance, cut at `threshold`."""
    if len(vectors) < 2:
        return [0] * len(vectors)
    # Imported here: ordinary turns never pay for scikit-learn, only the report does.
    import numpy as np
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=None, distance_threshold=threshold, metric="cosine",
                                    linkage="average")
    return [int(label) for label in model.fit_predict(np.asarray(vectors, dtype=float))]


def label_topics(groups: list[list[str]]) -> list[str]:
    """Name each group by its most distinctive words (TF-IDF over groups, each group one document)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    documents = [" ".join(questions) for questions in groups]
    try:
        vectorizer = TfidfVectorizer(stop_words="english", token_pattern=r"(?u)\b[A-Za-z][A-Za-z0-9_.+-]+\b",
                                     sublinear_tf=True)
        weights = vectorizer.fit_transform(documents).toarray()
    except ValueError:  # only stop words: nothing to name the groups by
        return ["(unnamed)"] * len(groups)
    terms = vectorizer.get_feature_names_out()
    labels = []
    for row in weights:
        top = [str(terms[i]) for i in row.argsort()[::-1][:LABEL_TERMS] if row[i] > 0]
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


def coverage_gaps(records: list[dict[str, Any]], embed: Embed,
                  threshold: float = DISTANCE_THRESHOLD) -> list[dict[str, Any]]:
    """Group the gap turns by topic, largest group first, each with examples and nearest sections."""
    gaps = [r for r in records if is_gap(r) and r["question"].strip()]
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
        "not_found": sum(r["status"] == "not_found" for r in group),
        "low_confidence": sum(r["status"] == "grounded" for r in group),
        "examples": list(dict.fromkeys(asked))[:EXAMPLES],
        "turn_ids": [r["turn_id"] for r in group],
        "nearest_sections": _nearest(group),
    } for name, group, asked in zip(names, ordered, questions, strict=True)]
