"""MTRAG benchmark: MTRAG-UN answerability and MTRAG human rewrites, run through the real graph."""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# Offline before any Hugging Face import: the bundled embedder never needs the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
# Run as a script, sys.path[0] is benchmarks/; the repo root makes `benchmarks.*` import as it does in tests.
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from benchmarks.mtrag_scoring import (  # noqa: E402
    aggregate,
    hit_at_k,
    normalize_text,
    replay_plan,
    safe_name,
    share,
    split_user_turns,
    token_f1,
)
from graph.context import Context  # noqa: E402
from rag_agent.evaluation import evaluate, gate_curve  # noqa: E402
from rag_agent.service import Agent  # noqa: E402
from tools import onnx_embedder  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402
from tools.settings import overridden  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "mtrag"
COLLECTION = "mtrag"
CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")
ANSWER_CLASSES = ("ANSWERABLE", "PARTIAL")
# evaluate.metrics scores GROUNDED for hit@k / false abstention and NOT_FOUND for abstention recall;
# UNDERSPECIFIED keeps its own label so it counts in neither.
EXPECTED = {"ANSWERABLE": "GROUNDED", "PARTIAL": "GROUNDED", "UNANSWERABLE": "NOT_FOUND"}
PREFIX = "PREFIX"  # expected label of replayed turns that are not scored


def build_index(passages: list[dict[str, Any]], workdir: Path, embedding_model: str) -> dict[str, Any]:
    """Write each passage as one Markdown page and ingest the folder with the project's own pipeline."""
    pages = workdir / "passages"
    pages.mkdir()
    taken: set[str] = set()
    doc_to_source: dict[str, str] = {}
    for passage in passages:
        title, _, body = passage["text"].partition("\n")
        name = safe_name(passage["document_id"], taken) + ".md"
        # The pool stores "title\nbody"; an H1 makes the title the chunk's title, as on a docs page,
        # instead of the file name (a hex document id) heading every chunk's embedding text.
        (pages / name).write_text(f"# {title.strip()}\n\n{body.strip()}\n", encoding="utf-8")
        doc_to_source[passage["document_id"]] = name
    data_dir = workdir / "data"
    start = time.perf_counter()
    report = ingest_folder(pages, data_dir=data_dir, collection=COLLECTION,
                           embeddings=get_embeddings(embedding_model), embedding_model=embedding_model,
                           progress=False)
    return {
        "data_dir": data_dir,
        "doc_to_source": doc_to_source,
        "source_to_doc": {source: doc for doc, source in doc_to_source.items()},
        "passages": len(passages),
        "chunks": report.chunks,
        "seconds": round(time.perf_counter() - start, 1),
    }


def run_mtragun(agent: Agent, tasks: list[dict[str, Any]], doc_to_source: dict[str, str]) -> dict[str, Any]:
    """Replay each task's user turns on one thread, ask the final question, and score it."""
    conversations = []
    for task in tasks:
        users = [m["text"] for m in task["input"] if m["speaker"] == "user"]
        label = task["answerability"][0]
        gold = sorted({doc_to_source[c["document_id"]] for c in task["contexts"]})
        turns: list[dict[str, Any]] = [{"question": q, "expected": PREFIX} for q in users[:-1]]
        turns.append({"question": users[-1], "gold": gold, "expected": EXPECTED.get(label, label)})
        conversations.append({"id": task["task_id"], "turns": turns})
    records = evaluate.run(agent, [], conversations)
    finals = {r["id"]: r for r in records if r["expected"] != PREFIX}
    rows = []
    for task in tasks:
        final = finals[task["task_id"]]
        label = task["answerability"][0]
        sources = [r["source"] for r in final["retrieved"]]
        rows.append({
            "task_id": task["task_id"], "collection": task["Collection"], "class": label,
            "turn_type": task["Multi-Turn"][0], "turn": final["turn"], "status": final["status"],
            "hit": hit_at_k(sources, final["gold"], 5) if label in ANSWER_CLASSES else None,
            "top_score": final["top_score"], "gate_score": final["gate_score"],
            "confidence": final["confidence"], "question": final["question"],
            "retrieval_query": final["retrieval_query"], "top_sources": sources[:5], "gold": final["gold"],
        })
    scored = list(finals.values())
    overall = evaluate.metrics(scored)
    curve = gate_curve.sweep(scored)
    threshold = agent_threshold(agent)
    at_gate = next((p for p in curve if abs(p["threshold"] - threshold) < 1e-9), None)
    by_turn_type = aggregate(rows, "turn_type")
    # Cross the turn types with the classes: one abstention figure alone would mix "should" and "should not".
    for suffix, classes in (("answerable", ANSWER_CLASSES), ("unanswerable", ("UNANSWERABLE",)),
                            ("underspecified", ("UNDERSPECIFIED",))):
        subset = aggregate([r for r in rows if r["class"] in classes], "turn_type")
        for name, figures in by_turn_type.items():
            part = subset.get(name)
            figures[f"n_{suffix}"] = part["n"] if part else 0
            figures[f"abstained_{suffix}"] = part["abstained"] if part else 0
            figures[f"abstention_{suffix}"] = part["abstention"] if part else None
    return {
        "tasks": len(tasks),
        "agent_turns": len(records),
        "prefix_turn_errors": sum(r["status"] == "error" for r in records if r["expected"] == PREFIX),
        "overall": {k: overall[k] for k in ("hit_at_5", "mrr_at_10", "false_abstention_rate", "abstention_recall",
                                            "citation_validity", "errors", "latency_p50_ms", "latency_p95_ms",
                                            "confidence_ece", "confidence_brier", "reliability")},
        "by_class": aggregate(rows, "class"),
        "by_turn_type": by_turn_type,
        "by_collection": aggregate(rows, "collection"),
        "gate_only": {"threshold": threshold, "at_threshold": at_gate, "best": gate_curve.best_threshold(curve)},
        "statuses": dict(sorted(Counter(r["status"] for r in rows).items())),
        "rows": rows,
    }


def agent_threshold(agent: Agent) -> float:
    """Return the score threshold the agent's index uses (the calibrated one unless overridden)."""
    from tools import manifest
    from tools.settings import get_settings

    ctx = agent.context
    info = manifest.collection_info(get_settings().data_dir, ctx.collection, ctx.embedding_model)
    return manifest.resolve_threshold(ctx.score_threshold, info, ctx.embedding_model)[0]


def load_rewrite_set(folder: Path, limit: int | None) -> list[dict[str, Any]]:
    """Read one MTRAG rewrite set: per query its conversation, turn, history, last turn, human rewrite, qrels."""
    name = folder.name
    history = {r["_id"]: split_user_turns(r["text"]) for r in evaluate.load_jsonl(folder / f"{name}_questions.jsonl")}
    last = {r["_id"]: split_user_turns(r["text"])[-1] for r in evaluate.load_jsonl(folder / f"{name}_lastturn.jsonl")}
    human = {r["_id"]: split_user_turns(r["text"])[-1] for r in evaluate.load_jsonl(folder / f"{name}_rewrite.jsonl")}
    qrels: dict[str, list[str]] = defaultdict(list)
    with (folder / "qrels" / "dev.tsv").open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if float(row["score"]) > 0:
                qrels[row["query-id"]].append(row["corpus-id"])
    items, conversations = [], []
    for qid in history:
        conv, _, turn = qid.partition("<::>")
        if conv not in conversations:
            conversations.append(conv)
        items.append({"id": qid, "set": name, "conversation": conv, "turn": int(turn), "history": history[qid],
                      "last": last[qid], "human": human[qid], "relevant": qrels.get(qid, [])})
    keep = set(conversations[:limit] if limit else conversations)
    return [item for item in items if item["conversation"] in keep]


def run_rewrites(agent: Agent, folders: list[Path], pool: set[str], source_to_doc: dict[str, str],
                 limit: int | None) -> dict[str, Any]:
    """Score the agent's standalone rewrites against human ones, and hit@5 with the rewrite on and off."""
    items = [item for folder in folders for item in load_rewrite_set(folder, limit)]
    plan, where = replay_plan(items)
    threads = [{"id": tid, "turns": [{"question": q, "expected": PREFIX} for q in turns]}
               for tid, turns in plan.items()]
    replayed = {(r["id"], r["turn"]): r for r in evaluate.run(agent, [], threads)}
    rows = []
    for item in items:
        if item["turn"] < 2:
            continue  # a first turn has nothing to resolve
        record = replayed[where[item["id"]]]
        rewrite = record["retrieval_query"]
        in_pool = [d for d in item["relevant"] if d in pool]
        rows.append({
            "id": item["id"], "set": item["set"], "turn": item["turn"], "last": item["last"],
            "human": item["human"], "agent": rewrite, "status": record["status"],
            "agent_rewrote": rewrite.strip() != item["last"].strip(),
            "human_rewrote": normalize_text(item["human"]) != normalize_text(item["last"]),
            "f1_agent": token_f1(rewrite, item["human"]), "f1_last_turn": token_f1(item["last"], item["human"]),
            "relevant": item["relevant"], "relevant_in_pool": in_pool,
            "hit_on": hit_at_k(_docs(record, source_to_doc), item["relevant"]) if in_pool else None,
        })
    # "Rewrite off" and the human rewrite: each text alone on a fresh thread, where nothing gets rewritten.
    covered = [row for row in rows if row["relevant_in_pool"]]
    singles = [{"id": f"{r['id']}|off", "question": r["last"], "expected": "OFF"} for r in covered]
    singles += [{"id": f"{r['id']}|human", "question": r["human"], "expected": "HUMAN"} for r in covered]
    fresh = {r["id"]: r for r in evaluate.run(agent, singles, [])}
    for row in covered:
        row["hit_off"] = hit_at_k(_docs(fresh[f"{row['id']}|off"], source_to_doc), row["relevant"])
        row["hit_human"] = hit_at_k(_docs(fresh[f"{row['id']}|human"], source_to_doc), row["relevant"])
    qrel_rows = [(item["set"], d in pool) for item in items for d in item["relevant"]]
    sets = sorted({item["set"] for item in items})
    summary = {name: _rewrite_summary([r for r in rows if r["set"] == name],
                                      [q for q in qrel_rows if q[0] == name]) for name in sets}
    summary["all"] = _rewrite_summary(rows, qrel_rows)
    return {"summary": summary, "agent_turns": len(replayed) + len(fresh), "rows": rows}


def _docs(record: dict[str, Any], source_to_doc: dict[str, str]) -> list[str]:
    """Map a record's retrieved chunk sources back to passage document ids, in rank order."""
    return [source_to_doc.get(r["source"], r["source"]) for r in record["retrieved"]]


def _rewrite_summary(rows: list[dict[str, Any]], qrel_rows: list[tuple[str, bool]]) -> dict[str, Any]:
    """Summarise rewrite quality and retrieval coverage for one set of follow-up rows."""
    covered = [r for r in rows if r["relevant_in_pool"]]
    needed = [r for r in rows if r["human_rewrote"]]

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 4) if values else None

    return {
        "followups": len(rows),
        "human_rewrote": len(needed),
        "agent_rewrote": sum(r["agent_rewrote"] for r in rows),
        "agent_rewrote_when_needed": sum(r["agent_rewrote"] for r in needed),
        "agent_rewrote_when_not_needed": sum(r["agent_rewrote"] and not r["human_rewrote"] for r in rows),
        "f1_agent": mean([r["f1_agent"] for r in rows]),
        "f1_last_turn": mean([r["f1_last_turn"] for r in rows]),
        "f1_agent_needed": mean([r["f1_agent"] for r in needed]),
        "f1_last_turn_needed": mean([r["f1_last_turn"] for r in needed]),
        "exact_match_agent": share([normalize_text(r["agent"]) == normalize_text(r["human"]) for r in rows]),
        "non_question_turns": sum(r["status"] not in ("grounded", "not_found") for r in rows),
        "qrels_rows": len(qrel_rows),
        "qrels_rows_in_pool": sum(in_pool for _, in_pool in qrel_rows),
        "followups_covered": len(covered),
        "followups_fully_covered": sum(len(r["relevant_in_pool"]) == len(r["relevant"]) for r in covered),
        "hit_at_5_off": share([r["hit_off"] for r in covered]),
        "hit_at_5_on": share([r["hit_on"] for r in covered]),
        "hit_at_5_human": share([r["hit_human"] for r in covered]),
    }


def machine() -> dict[str, Any]:
    """Describe the machine the figures were measured on."""
    threads = os.environ.get(onnx_embedder.THREADS_ENV, "default")
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "embedder_threads": threads,
        "python": platform.python_version(),
    }


def _pct(count: int, total: int) -> str:
    """Format a count as a percentage with its fraction, or a dash when there is nothing to count."""
    return f"{count / total:.1%} ({count}/{total})" if total else "–"


def _f(value: float | None) -> str:
    """Format an optional figure to three places."""
    return "–" if value is None else f"{value:.3f}"


def render(result: dict[str, Any]) -> str:
    """Render the figures as Markdown tables preceded by the machine and settings."""
    m, s, idx, un, rw = (result[k] for k in ("machine", "settings", "index", "mtragun", "rewrites"))
    out = [
        f"Machine: {m['platform']}, {m['processor']}, {m['cpu_count']} CPUs ({m['cpus_usable']} usable, "
        f"embedder threads {m['embedder_threads']}), Python {m['python']}",
        f"Embedder {s['embedding_model']}, top_k {s['top_k']}, score threshold {s['threshold']} (index default); "
        f"index: {idx['passages']} passages → {idx['chunks']} chunks in {idx['seconds']} s"
        + (f"; --limit {s['limit']}" if s["limit"] else ""),
        "",
        f"### MTRAG-UN: {un['tasks']} tasks, final question after replaying the prefix "
        f"({un['agent_turns']} agent turns)",
        "",
        "| answerability | n | hit@5 | abstained (not_found) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in CLASSES:
        g = un["by_class"].get(name)
        if g:
            out.append(f"| {name} | {g['n']} | {_pct(g['hits'], g['hit_n'])} | "
                       f"{_pct(g['abstained'], g['n'])} |")
    out += ["", "| turn type | n | hit@5 (ANSWERABLE+PARTIAL) | abstained: ANSWERABLE+PARTIAL | UNANSWERABLE | "
            "UNDERSPECIFIED |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, g in un["by_turn_type"].items():
        out.append(f"| {name} | {g['n']} | {_pct(g['hits'], g['hit_n'])} | "
                   f"{_pct(g['abstained_answerable'], g['n_answerable'])} | "
                   f"{_pct(g['abstained_unanswerable'], g['n_unanswerable'])} | "
                   f"{_pct(g['abstained_underspecified'], g['n_underspecified'])} |")
    o, gate = un["overall"], un["gate_only"]
    best, at = gate["best"], gate["at_threshold"] or {}
    out += [
        "",
        f"Overall: hit@5 {_f(o['hit_at_5'])}, MRR@10 {_f(o['mrr_at_10'])} (ANSWERABLE+PARTIAL); "
        f"citation validity {_f(o['citation_validity'])}; errors {o['errors']}; final-turn latency "
        f"p50 {o['latency_p50_ms']} ms, p95 {o['latency_p95_ms']} ms; statuses {un['statuses']}",
        f"Score gate alone (ANSWERABLE+PARTIAL vs UNANSWERABLE, top score): balanced accuracy "
        f"{_f(at.get('balanced_accuracy'))} at {gate['threshold']}, best {_f(best['balanced_accuracy'])} "
        f"at {best['threshold']} (diagnostic only, the threshold is not changed)",
        f"Confidence (correct = ANSWERABLE/PARTIAL and the cited or best passage is a reference): ECE "
        f"{_f(o['confidence_ece'])}, Brier {_f(o['confidence_brier'])}; by bin (count, share correct): "
        + ", ".join(f"{b['bin']} ({b['count']}, {_f(b['share_correct'])})" for b in o["reliability"]),
        "",
        f"### MTRAG rewrites: follow-up turns (turn > 1), {rw['agent_turns']} agent turns",
        "",
        "| set | follow-ups | human rewrote | agent rewrote (when human did / did not) | token F1 agent | "
        "token F1 last turn as is | on human-rewritten turns: agent / as is |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, g in rw["summary"].items():
        out.append(f"| {name} | {g['followups']} | {g['human_rewrote']} | {g['agent_rewrote']} "
                   f"({g['agent_rewrote_when_needed']} / {g['agent_rewrote_when_not_needed']}) | {_f(g['f1_agent'])} | "
                   f"{_f(g['f1_last_turn'])} | {_f(g['f1_agent_needed'])} / {_f(g['f1_last_turn_needed'])} |")
    out += ["", "| set | qrels rows in pool | follow-ups with a relevant passage in pool | hit@5 rewrite off | "
            "rewrite on | human rewrite |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, g in rw["summary"].items():
        out.append(f"| {name} | {_pct(g['qrels_rows_in_pool'], g['qrels_rows'])} | "
                   f"{_pct(g['followups_covered'], g['followups'])} | {_f(g['hit_at_5_off'])} | "
                   f"{_f(g['hit_at_5_on'])} | {_f(g['hit_at_5_human'])} |")
    t = result["runtime_seconds"]
    out += ["", f"Runtime: {t['total']} s (index {t['index']} s, MTRAG-UN {t['mtragun']} s, "
            f"rewrites {t['rewrites']} s)"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run both MTRAG benchmarks and print a table, or one JSON object with --json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, help="first N MTRAG-UN tasks and N rewrite conversations per set")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared eval/mtrag folder")
    parser.add_argument("--report", type=Path, help="write one JSON line per scored item here")
    parser.add_argument("--embedding-model", default=LOCAL_MODEL, help="embedder for the index and queries")
    parser.add_argument("--threads", type=int, default=1, help="embedder threads; 0 keeps the runtime's default")
    args = parser.parse_args(argv)
    if args.threads > 0:
        # On a small shared machine, one thread per core spins against the other workers: one query
        # embedding took 0.5 s with 2 threads and 0.02-0.03 s with 1 on 2 busy cores (torch, earlier).
        os.environ[onnx_embedder.THREADS_ENV] = str(args.threads)
    start = time.perf_counter()
    passages = evaluate.load_jsonl(args.data / "mtragun" / "passages.govt-clapnq.jsonl")
    tasks = evaluate.load_jsonl(args.data / "mtragun" / "reference.govt-clapnq.jsonl")[: args.limit]
    folders = [args.data / "rewrites" / "govt", args.data / "rewrites" / "clapnq"]
    with tempfile.TemporaryDirectory(prefix="mtrag-bench-") as tmp:
        index = build_index(passages, Path(tmp), args.embedding_model)
        # The benchmark is its own deployment: its scratch index and collection.
        with overridden(data_dir=str(index["data_dir"]), collection=COLLECTION):
            ctx = Context(collection=COLLECTION, embedding_model=args.embedding_model, top_k=5)
            agent = Agent(ctx, InMemorySaver())
            started = time.perf_counter()
            un = run_mtragun(agent, tasks, index["doc_to_source"])
            un_seconds = time.perf_counter() - started
            started = time.perf_counter()
            rw = run_rewrites(agent, folders, set(index["doc_to_source"]), index["source_to_doc"], args.limit)
            rw_seconds = time.perf_counter() - started
            threshold = agent_threshold(agent)
    result = {
        "machine": machine(),
        "settings": {"embedding_model": args.embedding_model, "top_k": ctx.top_k, "threshold": threshold,
                     "limit": args.limit},
        "index": {k: index[k] for k in ("passages", "chunks", "seconds")},
        "mtragun": {k: v for k, v in un.items() if k != "rows"},
        "rewrites": {k: v for k, v in rw.items() if k != "rows"},
        "runtime_seconds": {"total": round(time.perf_counter() - start, 1), "index": index["seconds"],
                            "mtragun": round(un_seconds, 1), "rewrites": round(rw_seconds, 1)},
    }
    if args.report:
        lines = [{"part": "mtragun", **r} for r in un["rows"]] + [{"part": "rewrites", **r} for r in rw["rows"]]
        args.report.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
