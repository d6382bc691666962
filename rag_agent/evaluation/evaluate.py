"""Offline evaluation: ask labelled questions, then retrieval hit@k, MRR, abstention, citations, latency, confidence."""

from __future__ import annotations

import json
import statistics
import uuid
from pathlib import Path
from typing import Any

from tqdm import tqdm

from logic.errors import InvalidInputError
from rag_agent.evaluation.figures import (
    abstention_split,
    answer_given,
    answers,
    by_class,
    followups,
    keyword_recall,
    selection_figures,
)
from rag_agent.service import Agent

# Equal-width confidence bins of the reliability table.
CONFIDENCE_BINS = 10


class EvalFileError(InvalidInputError, ValueError):
    """A question, conversation or selection file that cannot be used as given (exit 2, no traceback)."""


def load_questions(paths: list[Path], near_miss: list[Path]) -> list[dict[str, Any]]:
    """Read question files, tagging each question with its file's name and whether the file holds near misses."""
    marked = {p.resolve() for p in near_miss}
    questions = []
    for path in [*paths, *(p for p in near_miss if p.resolve() not in {x.resolve() for x in paths})]:
        for number, row in enumerate_jsonl(path):
            _check_question(row, f"{path}:{number}")
            questions.append({**row, "set": path.stem, "near_miss": path.resolve() in marked,
                              "where": f"{path}:{number}"})
    return questions


def load_conversations(path: Path) -> list[dict[str, Any]]:
    """Read a conversations file: one object a line, an `id` and a list of `turns` (each a question)."""
    conversations = []
    for number, row in enumerate_jsonl(path):
        where = f"{path}:{number}"
        turns = row.get("turns")
        if not isinstance(turns, list) or not turns:
            raise EvalFileError(f"{where}: field 'turns' must be a non-empty list of questions")
        for turn, question in enumerate(turns, 1):
            if not isinstance(question, dict):
                raise EvalFileError(f"{where}: turn {turn} must be an object with a 'question'")
            _check_question(question, f"{where}: turn {turn}")
        conversations.append({**row, "id": str(row.get("id", number))})
    return conversations


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines file of objects, naming the file and line of any that does not parse."""
    return [row for _, row in enumerate_jsonl(path)]


def enumerate_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Return (line number, object) for each non-blank line; a bad line is an EvalFileError naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise EvalFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    rows = []
    for number, line in enumerate(raw.splitlines(), 1):
        try:
            text = line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise EvalFileError(f"{path}:{number}: not valid UTF-8 (byte 0x{line[exc.start]:02x} at column "
                                f"{exc.start + 1})") from exc
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except RecursionError as exc:
            raise EvalFileError(f"{path}:{number}: not valid JSON (nested too deep)") from exc
        except ValueError as exc:
            raise EvalFileError(f"{path}:{number}: not valid JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise EvalFileError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        rows.append((number, row))
    return rows


def _check_question(row: dict[str, Any], where: str) -> None:
    """Refuse a question whose fields have the wrong type, naming the line and the field."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        got = "missing" if question is None else f"{type(question).__name__} {question!r}"[:80]
        raise EvalFileError(f"{where}: field 'question' must be non-empty text, got {got}")
    for name in ("gold", "answer_keywords"):
        value = row.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise EvalFileError(f"{where}: field {name!r} must be a list of text, got {value!r}"[:200])
    if row.get("expected") not in (None, "GROUNDED", "NOT_FOUND"):
        raise EvalFileError(f"{where}: field 'expected' must be GROUNDED or NOT_FOUND, got {row['expected']!r}"[:200])
    if row.get("selection_file") is not None and not isinstance(row["selection_file"], str):
        raise EvalFileError(f"{where}: field 'selection_file' must be a path (text), got {row['selection_file']!r}")


def _record(item_id: str, turn: int, question: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Keep what every metric needs from one turn."""
    return {
        "id": item_id, "turn": turn, "question": question["question"], "set": question.get("set", ""),
        "near_miss": bool(question.get("near_miss")),
        "kind": question.get("kind", ""), "class": question.get("answerability", ""),
        "selection": bool(question.get("selection_file")), "answer": result["answer"],
        "answer_keywords": question.get("answer_keywords") or [],
        "keyword_recall": keyword_recall(answer_given(result["answer"], result["status"]),
                                         question.get("answer_keywords") or []),
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


def selection_text(question: dict[str, Any], root: Path | None) -> str | None:
    """Return the whole text of a selection case's `selection_file` (a path under `root`), else None."""
    name = question.get("selection_file")
    if not name:
        return None
    where = question.get("where") or f"question {question.get('id', '')!r}"
    if root is None:
        raise EvalFileError(f"{where}: has a selection_file; pass --corpus or --selection-root")
    base = root.resolve()
    path = (base / str(name)).resolve()  # resolved: `..`, an absolute path or a symlink cannot leave the root
    if not path.is_relative_to(base):
        raise EvalFileError(f"{where}: selection_file {name!r} is outside the selection root {base}; "
                            "selection files must lie under --selection-root (or --corpus)")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFileError(f"{where}: cannot read selection_file {name!r}: {exc}") from exc


def selection_texts(questions: list[dict[str, Any]], root: Path | None) -> list[str | None]:
    """Read every question's selection up front, so a bad path stops the run before any question is asked."""
    return [selection_text(q, root) for q in questions]


def run(agent: Agent, questions: list[dict[str, Any]], conversations: list[dict[str, Any]],
        selection_root: Path | None = None) -> list[dict[str, Any]]:
    """Ask every question on its own thread and every conversation turn by turn on one thread."""
    records = []
    selections = selection_texts(questions, selection_root)
    total = len(questions) + sum(len(c["turns"]) for c in conversations)
    with tqdm(total=total, unit="turn", desc="eval") as bar:
        for q, selection in zip(questions, selections, strict=True):
            item_id = q.get("id") or q.get("source_id", "")
            records.append(_record(item_id, 1, q, agent.ask(q["question"], uuid.uuid4().hex, context=selection)))
            bar.update()
        for conv in conversations:
            thread = uuid.uuid4().hex
            for turn, q in enumerate(conv["turns"], 1):
                record = _record(conv["id"], turn, q, agent.ask(q["question"], thread))
                records.append({**record, "conversation": True})
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
        **followups(records), **answers(records), **abstention_split(out), **selection_figures(chosen),
        **by_class(records),
        **calibration(records),
    }


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
