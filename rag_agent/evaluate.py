"""Offline evaluation: retrieval hit@k, MRR, abstention, citation validity, latency; gate calibration."""

from __future__ import annotations

import json
import re
import statistics
import uuid
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rag_agent.service import Agent

# Equal-width confidence bins of the reliability table.
CONFIDENCE_BINS = 10


def load_questions(paths: list[Path], near_miss: list[Path]) -> list[dict[str, Any]]:
    """Read question files, tagging each question with its file's name and whether the file holds near misses."""
    marked = {p.resolve() for p in near_miss}
    return [{**q, "set": path.stem, "near_miss": path.resolve() in marked}
            for path in [*paths, *(p for p in near_miss if p.resolve() not in {x.resolve() for x in paths})]
            for q in load_jsonl(path)]


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines file, naming the line that does not parse."""
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc})") from exc
    return rows


def _record(item_id: str, turn: int, question: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Keep what every metric needs from one turn."""
    return {
        "id": item_id, "turn": turn, "question": question["question"], "set": question.get("set", ""),
        "near_miss": bool(question.get("near_miss")),
        "kind": question.get("kind", ""), "class": question.get("answerability", ""),
        "selection": bool(question.get("selection_file")), "answer": result["answer"],
        "answer_keywords": question.get("answer_keywords") or [],
        "keyword_recall": keyword_recall(result["answer"], question.get("answer_keywords") or []),
        "flagged": result.get("flagged", False),
        "expected": question.get("expected") or ("GROUNDED" if question.get("gold") else "NOT_FOUND"),
        "gold": question.get("gold") or [],
        "status": result["status"], "retrieval_query": result["retrieval_query"],
        "retrieved": [{"source": r["source"], "score": r["score"], "relevance": r["relevance"]}
                      for r in result["retrieved"]],
        "citations": [{"source": c["source"], "chunk_id": c["chunk_id"]} for c in result["citations"]],
        "retrieved_ids": [r["chunk_id"] for r in result["retrieved"]],
        "top_score": result["top_score"], "gate_score": result["gate_score"],
        "latency_ms": round(result["execution_time_seconds"] * 1000, 1),
        "threshold": result["threshold"], "confidence": result["confidence"],
        "grounding": result["grounding"],
    }


def keyword_recall(answer: str, keywords: list[str]) -> float | None:
    """Return the share of expected keywords the answer contains, case-insensitive (None without keywords)."""
    if not keywords:
        return None
    lowered = answer.lower()
    return round(sum(k.lower() in lowered for k in keywords) / len(keywords), 4)


def selection_text(question: dict[str, Any], root: Path | None) -> str | None:
    """Return the whole text of a selection case's `selection_file` (a path under `root`), else None."""
    name = question.get("selection_file")
    if not name:
        return None
    if root is None:
        raise ValueError(f"question {question.get('id', '')!r} has a selection_file; pass --corpus or --selection-root")
    return (root / str(name)).read_text(encoding="utf-8")


def run(agent: Agent, questions: list[dict[str, Any]], conversations: list[dict[str, Any]],
        selection_root: Path | None = None) -> list[dict[str, Any]]:
    """Ask every question on its own thread and every conversation turn by turn on one thread."""
    records = []
    total = len(questions) + sum(len(c["turns"]) for c in conversations)
    with tqdm(total=total, unit="turn", desc="eval") as bar:
        for q in questions:
            item_id = q.get("id") or q.get("source_id", "")
            selection = selection_text(q, selection_root)
            records.append(_record(item_id, 1, q, agent.ask(q["question"], uuid.uuid4().hex, context=selection)))
            bar.update()
        for conv in conversations:
            thread = uuid.uuid4().hex
            for turn, q in enumerate(conv["turns"], 1):
                records.append(_record(conv["id"], turn, q, agent.ask(q["question"], thread)))
                bar.update()
    return records


def _rank(record: dict[str, Any]) -> int | None:
    """Return the 1-based rank of the first gold chunk, if any."""
    for i, r in enumerate(record["retrieved"], 1):
        if r["source"] in record["gold"]:
            return i
    return None


def metrics(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Compute the evaluation figures from turn records; selection cases are reported apart."""
    chosen = [r for r in records if r.get("selection")]
    records = [r for r in records if not r.get("selection")]
    inscope = [r for r in records if r["expected"] == "GROUNDED"]
    out = [r for r in records if r["expected"] == "NOT_FOUND"]
    follow = [r for r in inscope if r["turn"] > 1]
    ranks = [_rank(r) for r in inscope]
    cites = [(c, r) for r in records for c in r["citations"]]
    latencies = sorted(r["latency_ms"] for r in records)

    def share(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    return {
        "hit_at_1": share([k == 1 for k in ranks]),
        "hit_at_5": share([k is not None and k <= 5 for k in ranks]),
        "mrr_at_10": round(sum(1 / k for k in ranks if k and k <= 10) / len(ranks), 4) if ranks else None,
        "abstention_recall": share([r["status"] == "not_found" for r in out]),
        "false_abstention_rate": share([r["status"] == "not_found" for r in inscope]),
        "followup_hit_at_5": share([(k := _rank(r)) is not None and k <= 5 for r in follow]),
        "citation_validity": share([c["chunk_id"] in r["retrieved_ids"] for c, r in cites]) if cites else 1.0,
        "latency_p50_ms": statistics.median(latencies) if latencies else None,
        "latency_p95_ms": latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
        "count_in_scope": len(inscope), "count_out_of_scope": len(out), "count_followups": len(follow),
        "errors": sum(r["status"] == "error" for r in records),
        **answers(records), **abstention_split(out), **selection_figures(chosen), **by_class(records),
        **calibration(records),
    }


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


def is_correct(record: dict[str, Any]) -> bool:
    """Tell whether the section the turn rests on answers it: in scope, and cited (or best, if refused) is gold."""
    if record["expected"] != "GROUNDED":
        return False
    top = record["citations"][:1] if record["status"] == "grounded" else record["retrieved"][:1]
    return bool(top) and top[0]["source"] in record["gold"]


def reliability(records: list[dict[str, Any]], bins: int = CONFIDENCE_BINS) -> list[dict[str, Any]]:
    """Group turns by confidence into equal-width bins: count, mean confidence and share correct in each."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("confidence") is not None:
            grouped.setdefault(min(int(r["confidence"] * bins), bins - 1), []).append(r)
    return [{"bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}", "count": len(inside),
             "mean_confidence": statistics.fmean(r["confidence"] for r in inside),
             "share_correct": statistics.fmean(is_correct(r) for r in inside)}
            for b, inside in sorted(grouped.items())]


def calibration(records: list[dict[str, Any]], bins: int = CONFIDENCE_BINS) -> dict[str, Any]:
    """Return the reliability table, expected calibration error and Brier score of the turns' confidence."""
    scored = [r for r in records if r.get("confidence") is not None]
    if not scored:
        return {"confidence_ece": None, "confidence_brier": None, "reliability": []}
    table = reliability(scored, bins)
    ece = sum(row["count"] * abs(row["share_correct"] - row["mean_confidence"]) for row in table) / len(scored)
    brier = statistics.fmean((r["confidence"] - is_correct(r)) ** 2 for r in scored)
    rounded = [{k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()} for row in table]
    return {"confidence_ece": round(ece, 4), "confidence_brier": round(brier, 4), "reliability": rounded}


def format_reliability(table: list[dict[str, Any]]) -> str:
    """Render the reliability table: per confidence bin, the turns, their mean confidence and share correct."""
    lines = ["confidence  turns  mean confidence  share correct"]
    lines += [f"{row['bin']:>10}  {row['count']:5d}  {row['mean_confidence']:15.3f}  {row['share_correct']:13.3f}"
              for row in table]
    return "\n".join(lines)


def sweep(records: list[dict[str, Any]], step: float = 0.01) -> list[dict[str, float]]:
    """Return balanced accuracy of the score gate at each threshold, from the recorded gate scores."""
    inscope = [_gate(r) for r in records if r["expected"] == "GROUNDED" and not r.get("selection")]
    out = [_gate(r) for r in records if r["expected"] == "NOT_FOUND" and not r.get("selection")]
    curve = []
    for i in range(int(1 / step) + 1):
        t = round(i * step, 4)
        tpr = sum(s >= t for s in inscope) / max(len(inscope), 1)
        tnr = sum(s < t for s in out) / max(len(out), 1)
        curve.append({"threshold": t, "answer_rate_in_scope": round(tpr, 4),
                      "abstention_out_of_scope": round(tnr, 4), "balanced_accuracy": round((tpr + tnr) / 2, 4)})
    return curve


def _gate(record: dict[str, Any]) -> float:
    """Return the figure the gate compares with its threshold (the top score on records made before it existed)."""
    value = record.get("gate_score")
    return (record.get("top_score") if value is None else value) or 0.0


def best_threshold(curve: list[dict[str, float]]) -> dict[str, float]:
    """Pick the threshold with the best balanced accuracy; ties go to the middle of the plateau."""
    top = max(p["balanced_accuracy"] for p in curve)
    plateau = [p for p in curve if p["balanced_accuracy"] == top]
    return plateau[len(plateau) // 2]


def format_curve(curve: list[dict[str, float]], best: dict[str, float], every: float = 0.05) -> str:
    """Render the sweep as a table at round thresholds, plus the chosen one."""
    rows = [p for p in curve if round(p["threshold"] / every, 6).is_integer() or p is best]
    lines = ["threshold  answered(in)  abstained(out)  balanced"]
    for p in rows:
        mark = "  <- best" if p is best else ""
        lines.append(f"{p['threshold']:9.2f}  {p['answer_rate_in_scope']:12.3f}  "
                     f"{p['abstention_out_of_scope']:14.3f}  {p['balanced_accuracy']:8.3f}{mark}")
    return "\n".join(lines)


def check_plotting() -> None:
    """Fail before any work when --plot is asked for but the optional plotting extra is missing."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        from logic.errors import InvalidInputError

        raise InvalidInputError("--plot needs matplotlib, which is optional: install it with "
                                "`pip install 'rag-agent[plot]'`, or leave out --plot")


def plot_curve(curve: list[dict[str, float]], best: dict[str, float], path: Path) -> None:
    """Save the sweep as a PNG: answer rate, abstention and balanced accuracy against the threshold."""
    import matplotlib

    matplotlib.use("Agg")  # no display here, and none needed for a file
    import matplotlib.pyplot as plt

    x = [p["threshold"] for p in curve]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(x, [p["answer_rate_in_scope"] for p in curve], label="in-scope answered")
    ax.plot(x, [p["abstention_out_of_scope"] for p in curve], label="out-of-scope abstained")
    ax.plot(x, [p["balanced_accuracy"] for p in curve], label="balanced accuracy", linewidth=2)
    ax.axvline(best["threshold"], color="grey", linestyle="--", label=f"chosen {best['threshold']:.2f}")
    ax.set_xlabel("gate threshold (confidence)")
    ax.set_ylabel("share")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
