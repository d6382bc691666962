"""`rag-agent report`: outcome rates and their trend, latency, cited sections, negative feedback, coverage gaps."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Collection
from typing import Any

from graph.recording import iso
from logic.gaps import Embed, coverage_gaps, is_far_off, wrong_answer_candidates
from tools.records import RecordStore

OUTCOMES = ("answered", "flagged", "not_found", "error", "other")
TOP_SECTIONS = 10


def outcome(record: dict[str, Any]) -> str:
    """Sort a turn into one outcome; flagged answers are counted apart from confident ones."""
    status = record["status"]
    if status == "grounded":
        return "flagged" if record.get("flagged") else "answered"
    return status if status in {"not_found", "error"} else "other"  # chit-chat, reset


def _rates(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Count each outcome and its share of all turns."""
    counts = Counter(outcome(r) for r in records)
    total = len(records)
    return {"turns": total, "counts": {o: counts[o] for o in OUTCOMES},
            "rates": {o: round(counts[o] / total, 3) if total else 0.0 for o in OUTCOMES}}


def _trend(records: list[dict[str, Any]], since: float, until: float) -> list[dict[str, Any]]:
    """Count outcomes per day (per hour for windows of two days or less), oldest bucket first."""
    step = 3600.0 if until - since <= 2 * 86400 else 86400.0
    start = since - since % step
    buckets: dict[float, Counter[str]] = {start + i * step: Counter() for i in range(int((until - start) // step) + 1)}
    for record in records:
        bucket = record["finished_at"] - record["finished_at"] % step
        buckets.setdefault(bucket, Counter())[outcome(record)] += 1
    return [{"start": iso(b), **{o: c[o] for o in OUTCOMES}} for b, c in sorted(buckets.items())]


def _latency(records: list[dict[str, Any]]) -> dict[str, float | None]:
    """Return the p50 and p95 turn latency in milliseconds."""
    values = sorted(r["latency_ms"] for r in records)
    if not values:
        return {"p50_ms": None, "p95_ms": None}
    if len(values) == 1:
        return {"p50_ms": values[0], "p95_ms": values[0]}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50_ms": round(cuts[49], 1), "p95_ms": round(cuts[94], 1)}


def _cited(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the sections answers cited most, with how many answers cited each."""
    counts: Counter[tuple[str, str]] = Counter()
    for record in records:
        if record["status"] == "grounded":
            counts.update({(s.get("title", ""), s.get("source_url", "")) for s in record.get("sources") or []})
    return [{"title": t, "source_url": u, "answers": n} for (t, u), n in counts.most_common(TOP_SECTIONS)]


def _feedback(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Summarise ratings; list each negative one with the question it was about."""
    negative = [{"turn_id": r["turn_id"], "question": r["question"], "comment": r["comment"], "status": r["status"],
                 "rated_at": iso(r["created_at"])} for r in rows if r["rating"] < 0]
    return {"up": sum(r["rating"] > 0 for r in rows), "down": len(negative), "negative": negative}


def build(store: RecordStore, window_seconds: float, embed: Embed | Callable[[list[str]], list[list[float]]],
          now: float | None = None, vocabulary: Collection[str] | None = None) -> dict[str, Any]:
    """Build the report over the turns that finished in the last `window_seconds`.

    `vocabulary`: the index's words (its lexicon); a question using none of them is far off, not a gap.
    """
    until = time.time() if now is None else now
    since = until - window_seconds
    records = store.turns(since)
    far = [r for r in records if is_far_off(r, vocabulary)]
    rated = store.feedback(since)
    return {
        "window": {"since": iso(since), "until": iso(until), "days": round(window_seconds / 86400, 2)},
        **_rates(records),
        "trend": _trend(records, since, until),
        "latency": _latency(records),
        "tokens": sum(r["tokens"] for r in records),
        "threads": len({r["thread_id"] for r in records}),
        "top_cited_sections": _cited(records),
        "feedback": _feedback(rated),
        "coverage_gaps": coverage_gaps(records, embed, vocabulary=vocabulary),
        "far_off": {"count": len(far), "examples": list(dict.fromkeys(r["question"] for r in far))[:10]},
        "wrong_answer_candidates": wrong_answer_candidates(records, rated, embed),
    }


def format_text(report: dict[str, Any], gaps: int = 10) -> str:
    """Render the report as a terminal summary."""
    window, rates, counts = report["window"], report["rates"], report["counts"]
    lines = [f"rag-agent report {window['since'][:16]} → {window['until'][:16]} UTC: {report['turns']} turns, "
             f"{report['threads']} conversations, {report['tokens']} tokens",
             "  " + "  ".join(f"{o.replace('_', '-')} {counts[o]} ({rates[o]:.0%})" for o in OUTCOMES),
             f"  latency p50 {report['latency']['p50_ms']} ms, p95 {report['latency']['p95_ms']} ms",
             "", "Most cited sections:"]
    lines += [f"  {s['answers']:4}  {s['title']}  {s['source_url']}" for s in report["top_cited_sections"]] or ["  -"]
    feedback = report["feedback"]
    lines += ["", f"Feedback: {feedback['up']} up, {feedback['down']} down"]
    lines += [f"  - {f['question']}" + (f"  — “{f['comment']}”" if f["comment"] else "") for f in feedback["negative"]]
    lines += ["", "Coverage gaps (questions the docs could not answer, by topic):"]
    for group in report["coverage_gaps"][:gaps]:
        lines.append(f"  {group['count']:4}  {group['topic']}")
        lines += [f"          e.g. {q}" for q in group["examples"][:3]]
        lines += [f"          nearest: {s['title']} {s['source_url']}" for s in group["nearest_sections"][:1]]
    if not report["coverage_gaps"]:
        lines.append("  none")
    elif len(report["coverage_gaps"]) > gaps:
        lines.append(f"  … {len(report['coverage_gaps']) - gaps} more topics (--json or --html for all)")
    far = report["far_off"]
    lines += ["", f"Far-off questions (not about these docs, not counted as gaps): {far['count']}"]
    lines += [f"  - {q}" for q in far["examples"][:5]]
    lines += ["", "Possibly wrong answers (thumbs-down, low confidence, flagged, asked again):"]
    lines += [f"  - {w['question']}  [{'; '.join(w['reasons'])}]" for w in report["wrong_answer_candidates"]]
    if not report["wrong_answer_candidates"]:
        lines.append("  none")
    return "\n".join(lines)
