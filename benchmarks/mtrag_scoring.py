"""Pure helpers for the MTRAG benchmark: token F1, hit@k, per-group aggregation, file names, replay plans."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def normalize_text(text: str) -> str:
    """Normalise as the SQuAD script does: lowercase, drop punctuation and articles, squash spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, reference: str) -> float:
    """Return SQuAD-style token F1 between a prediction and a reference string."""
    pred, ref = normalize_text(prediction).split(), normalize_text(reference).split()
    if not pred or not ref:
        # SQuAD's convention: two empty strings agree, one empty string scores zero.
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def hit_at_k(retrieved: Sequence[str], relevant: Iterable[str], k: int = 5) -> bool:
    """Tell whether any of the first k retrieved ids is relevant."""
    wanted = set(relevant)
    return any(item in wanted for item in retrieved[:k])


def share(flags: Sequence[bool]) -> float | None:
    """Return the fraction of true flags rounded to 4 places, or None for an empty list."""
    return round(sum(flags) / len(flags), 4) if flags else None


def aggregate(records: Iterable[Mapping[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Group records by `key`: count, hit@5 over records with a `hit`, and abstention (status not_found)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(str(record[key]), []).append(record)
    result: dict[str, dict[str, Any]] = {}
    for name in sorted(groups):
        rows = groups[name]
        # `hit` is None where the class has no reference passage to find (e.g. UNANSWERABLE).
        hits = [bool(r["hit"]) for r in rows if r.get("hit") is not None]
        abstained = [r["status"] == "not_found" for r in rows]
        result[name] = {
            "n": len(rows),
            "hit_n": len(hits),
            "hits": sum(hits),
            "hit_at_5": share(hits),
            "abstained": sum(abstained),
            "abstention": share(abstained),
            "errors": sum(r["status"] == "error" for r in rows),
        }
    return result


def safe_name(document_id: str, taken: set[str]) -> str:
    """Return a filesystem-safe, case-insensitively unique file stem for a document id."""
    stem = _UNSAFE.sub("_", document_id).strip("._") or "doc"
    candidate, n = stem, 1
    # Case-insensitive file systems would merge "A" and "a"; suffix until the stem is free.
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem}_{n}"
    taken.add(candidate.lower())
    return candidate


def split_user_turns(text: str) -> list[str]:
    """Split an MTRAG rewrite-set history ("|user|: a\\n|user|: b") into the user turns' texts."""
    prefix = "|user|: "
    return [line[len(prefix):] if line.startswith(prefix) else line for line in text.split("\n")]


def replay_plan(items: Iterable[Mapping[str, Any]]) -> tuple[dict[str, list[str]], dict[str, tuple[str, int]]]:
    """Plan as few replayed threads as possible; map each query id to (thread id, 1-based turn on it)."""
    items = list(items)
    longest: dict[str, list[str]] = {}
    for item in items:
        if len(item["history"]) > len(longest.get(item["conversation"], [])):
            longest[item["conversation"]] = list(item["history"])
    plan: dict[str, list[str]] = dict(longest)
    where: dict[str, tuple[str, int]] = {}
    for item in items:
        history = list(item["history"])
        if longest[item["conversation"]][: len(history)] == history:
            # Its history is a prefix of the conversation's longest one: read it off that thread.
            where[item["id"]] = (item["conversation"], len(history))
        else:
            # Histories that disagree cannot share a thread, so this query gets its own.
            plan[item["id"]] = history
            where[item["id"]] = (item["id"], len(history))
    return plan, where
