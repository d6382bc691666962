"""Answer-level evaluation figures: keyword recall, answer defects, near-miss vs far-off, selection, per class."""

from __future__ import annotations

import re
import statistics
from typing import Any


def keyword_recall(answer: str, keywords: list[str]) -> float | None:
    """Return the share of expected keywords the answer contains, case-insensitive (None without keywords)."""
    if not keywords:
        return None
    lowered = answer.lower()
    return round(sum(k.lower() in lowered for k in keywords) / len(keywords), 4)


def _share(values: list[bool]) -> float | None:
    """Return the share of true values, rounded (None for none)."""
    return round(sum(values) / len(values), 4) if values else None


_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def answer_defects(answer: str) -> list[str]:
    """Name what is broken in an answer's text: a lead-in cut off with ":.", or a code fence with an empty body."""
    prose = _FENCE.sub("", answer)  # inside code, ":." is code (f"{x:.1%}"), not a cut lead-in
    found = [":." for _ in [0] if ":." in prose]
    found += ["empty code block" for body in _FENCE.findall(answer) if not body.strip()]
    return found


def answers(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return answer keyword recall over the turns that carry keywords, and answers containing ":."."""
    recalls = [r["keyword_recall"] for r in records if r.get("keyword_recall") is not None]
    return {"answer_keyword_recall": round(statistics.fmean(recalls), 4) if recalls else None,
            "count_with_keywords": len(recalls), "flagged": sum(bool(r.get("flagged")) for r in records),
            "answers_with_colon_period": sum(":." in answer_defects(r.get("answer", "")) for r in records),
            "answers_with_defects": sum(bool(answer_defects(r.get("answer", ""))) for r in records)}


def abstention_split(out: list[dict[str, Any]]) -> dict[str, Any]:
    """Return abstention on near misses (files marked near-miss) apart from far-off questions, and per file."""
    near = [r["status"] == "not_found" for r in out if r.get("near_miss")]
    far = [r["status"] == "not_found" for r in out if not r.get("near_miss")]
    sets = sorted({r.get("set", "") for r in out})
    return {"near_miss_abstention": _share(near), "far_off_abstention": _share(far),
            "count_near_miss": len(near), "count_far_off": len(far),
            "abstention_by_set": {s: _share([r["status"] == "not_found" for r in out if r.get("set", "") == s])
                                  for s in sets}}


def selection_figures(chosen: list[dict[str, Any]]) -> dict[str, Any]:
    """Count selection cases answered (of those to answer) and refused (of the unrelated ones)."""
    if not chosen:
        return {}
    answer = [r for r in chosen if r["expected"] == "GROUNDED"]
    refuse = [r for r in chosen if r["expected"] == "NOT_FOUND"]
    recalls = [r["keyword_recall"] for r in answer if r.get("keyword_recall") is not None]
    return {"selection_answered": f"{sum(r['status'] == 'grounded' for r in answer)}/{len(answer)}",
            "selection_refused": f"{sum(r['status'] == 'not_found' for r in refuse)}/{len(refuse)}",
            "selection_keyword_recall": round(statistics.fmean(recalls), 4) if recalls else None}


def by_class(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per answerability class (MTRAG-UN labels), the share answered and the share abstained."""
    classes = sorted({r["class"] for r in records if r.get("class")})
    if not classes:
        return {}
    table = {}
    for name in classes:
        rows = [r for r in records if r.get("class") == name]
        table[name] = {"n": len(rows), "answered": _share([r["status"] == "grounded" for r in rows]),
                       "abstained": _share([r["status"] == "not_found" for r in rows])}
    return {"by_class": table}
