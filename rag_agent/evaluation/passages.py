"""Figures judged by the answer's keywords: passage hit@k, follow-up turns right, keyword calibration.

All of them read `rag-agent eval --report` records (rag_agent/evaluation/evaluate.py `_record`) and one rule:

An answer or a chunk **holds** its keywords when it contains, case-insensitively, at least half of the
question's `answer_keywords` (rounded up: 1 of 1, 1 of 2, 2 of 3, 2 of 4). Half, not all, because a
correct passage may name a list's items across two chunks, and keywords are proxies, not a judge.

- **passage hit@k**: for an in-scope question with answer keywords, some chunk among the first k the
  turn retrieved (the chunk's text, not just its page) holds the keywords.
- **follow-up turn right**: a conversation turn after the first whose status is right (grounded when it
  has gold pages, not found when its gold is null) and, when it expects an answer and has keywords,
  whose answer holds them.
- **where a miss's passage was**: for an answer that does not hold its keywords, whether no retrieved chunk held them,
  one did but the answer quoted none of those, or it quoted one of them and chose another part of it.
- **keyword calibration**: over the answers given (status grounded) that can be judged — in-scope ones
  with keywords and every answer to a question that expects not-found — an answer is correct when it
  holds its keywords (an answer to a not-found question never is). ECE over bins of width 0.1, and the
  share of answers with confidence >= 0.9 that are correct.
"""

from __future__ import annotations

import statistics
from typing import Any

from rag_agent.evaluation.figures import answer_given, holds_keywords

HIGH_CONFIDENCE = 0.9
BINS = 10


def holds(text: str, keywords: list[str]) -> bool:
    """Tell whether `text` holds `keywords` (figures.py's rule); no keywords hold nothing here."""
    return bool(keywords) and holds_keywords(text, keywords)


def passage_rank(record: dict[str, Any], texts: dict[str, str]) -> int | None:
    """Return the 1-based rank of the first retrieved chunk that holds the record's keywords, if any."""
    for rank, chunk_id in enumerate(record.get("retrieved_ids") or [], 1):
        if holds(texts.get(chunk_id, ""), record.get("answer_keywords") or []):
            return rank
    return None


def _share(values: list[bool]) -> float | None:
    """Return the share of true values, rounded (None for none)."""
    return round(sum(values) / len(values), 4) if values else None


def passage_hits(records: list[dict[str, Any]], texts: dict[str, str], ks: tuple[int, ...] = (1, 5)) -> dict[str, Any]:
    """Return passage hit@k for each k over in-scope records with answer keywords (`texts`: chunk id -> text)."""
    judged = [r for r in records if r["expected"] == "GROUNDED" and r.get("answer_keywords")]
    ranks = [passage_rank(r, texts) for r in judged]
    return {**{f"passage_hit_at_{k}": _share([rank is not None and rank <= k for rank in ranks]) for k in ks},
            "count_passage_judged": len(judged)}


def missed_passages(records: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, int]:
    """Count in-scope answers missing their keywords by where the passage holding them was (`texts`: id -> text)."""
    counts = {"misses_not_retrieved": 0, "misses_not_quoted": 0, "misses_other_part": 0}
    for r in records:
        keywords = r.get("answer_keywords") or []
        if r["expected"] != "GROUNDED" or r["status"] != "grounded" or not keywords \
                or holds(answer_given(r["answer"], r["status"]), keywords):
            continue
        holding = {i for i in r.get("retrieved_ids") or [] if holds(texts.get(i, ""), keywords)}
        quoted = {c["chunk_id"] for c in r.get("citations") or []}
        where = "other_part" if holding & quoted else "not_quoted" if holding else "not_retrieved"
        counts[f"misses_{where}"] += 1
    return counts


def _judged_answers(records: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """Return (confidence, holds its keywords) for every answer given that can be judged by keywords."""
    pairs = []
    for r in records:
        if r["status"] != "grounded" or r.get("confidence") is None:
            continue
        if r["expected"] != "GROUNDED":
            pairs.append((float(r["confidence"]), False))
        elif r.get("answer_keywords"):
            pairs.append((float(r["confidence"]), holds(answer_given(r["answer"], r["status"]), r["answer_keywords"])))
    return pairs


def keyword_calibration(records: list[dict[str, Any]], bins: int = BINS) -> dict[str, Any]:
    """Return ECE against 'the answer holds its keywords', its reliability table and the high-confidence share."""
    pairs = _judged_answers(records)
    grouped: dict[int, list[tuple[float, bool]]] = {}
    for confidence, right in pairs:
        grouped.setdefault(min(int(confidence * bins), bins - 1), []).append((confidence, right))
    gaps = [len(inside) * abs(statistics.fmean(r for _, r in inside) - statistics.fmean(c for c, _ in inside))
            for inside in grouped.values()]
    ece = sum(gaps) / len(pairs) if pairs else None
    table = [{"bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}", "count": len(inside),
              "mean_confidence": round(statistics.fmean(c for c, _ in inside), 4),
              "share_holding": round(statistics.fmean(r for _, r in inside), 4)}
             for b, inside in sorted(grouped.items())]
    high = [right for confidence, right in pairs if confidence >= HIGH_CONFIDENCE]
    return {"keyword_ece": round(ece, 4) if ece is not None else None, "count_judged_answers": len(pairs),
            "high_confidence_holding": _share(high), "count_high_confidence": len(high),
            "keyword_reliability": table}
