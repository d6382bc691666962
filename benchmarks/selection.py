"""Selected-text mode on labelled questions: answered from the right page, refused with the wrong one.

Each in-scope textbook question is asked twice with a page as the selection: its gold page (should be
answered, citing the selection) and a page from another module (should be refused). Out-of-scope
questions are asked with a random textbook page (should be refused). The gate's scores then give the
threshold sweep for selections, to compare with the threshold calibrated on the index.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script, sys.path[0] is benchmarks/

from benchmarks._common import machine  # noqa: E402
from graph.context import Context  # noqa: E402
from logic.validation import MAX_SELECTION_CHARS  # noqa: E402
from rag_agent import evaluate  # noqa: E402
from rag_agent.service import Agent  # noqa: E402
from tools.settings import overridden  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"


def pages(corpus: Path) -> dict[str, str]:
    """Return every page of the corpus by its path, cut to the longest selection accepted."""
    return {str(p.relative_to(corpus)): p.read_text(encoding="utf-8")[:MAX_SELECTION_CHARS]
            for p in sorted(corpus.rglob("*.md"))}


def cases(questions: list[dict[str, Any]], ood: list[dict[str, Any]], corpus: dict[str, str],
          rng: random.Random) -> list[dict[str, Any]]:
    """Pair each question with the selection it is asked about and the outcome expected."""
    out = []
    for q in questions:
        if q.get("expected") != "GROUNDED":
            continue
        module = q["gold"][0].split("/", 1)[0]
        elsewhere = [p for p in corpus if p.split("/", 1)[0] != module]
        out.append({"question": q["question"], "page": q["gold"][0], "expected": "GROUNDED"})
        out.append({"question": q["question"], "page": rng.choice(elsewhere), "expected": "NOT_FOUND"})
    for q in ood:
        out.append({"question": q["question"], "page": rng.choice(sorted(corpus)), "expected": "NOT_FOUND"})
    return out


def main() -> None:
    """Run the cases and print the answer and refusal rates, and the best threshold for selections."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=SHARED / "textbook" / "corpus")
    parser.add_argument("--questions", type=Path, default=SHARED / "textbook" / "textbook-questions.jsonl")
    parser.add_argument("--ood", type=Path, default=SHARED / "ood" / "squad2-ood-questions.jsonl")
    parser.add_argument("--ood-limit", type=int, default=60, help="out-of-scope questions to ask (default 60)")
    args = parser.parse_args()
    print(machine())
    corpus = pages(args.corpus)
    ood = evaluate.load_jsonl(args.ood)[: args.ood_limit]
    runs = cases(evaluate.load_jsonl(args.questions), ood, corpus, random.Random(7))
    records = []
    with tempfile.TemporaryDirectory() as data, overridden(data_dir=data), Agent(Context(), "memory") as agent:
        for i, case in enumerate(runs):
            out = agent.ask(case["question"], f"s{i}", context=corpus[case["page"]])
            cited = {c["source"] for c in out["citations"]}
            records.append({**case, "status": out["status"], "top_score": out["top_score"],
                            "gate_score": out["gate_score"],
                            "threshold": out["threshold"], "cites_selection_only": cited <= {"selection"}})
    answerable = [r for r in records if r["expected"] == "GROUNDED"]
    refusable = [r for r in records if r["expected"] == "NOT_FOUND"]
    for r in records:  # the misses, to judge whether the gate or the pairing is at fault
        if (r["status"] == "grounded") != (r["expected"] == "GROUNDED"):
            print(f"miss: expected {r['expected']}, got {r['status']} ({r['top_score']}): "
                  f"{r['question']!r} with {r['page']}")
    curve = evaluate.sweep(records)
    best = evaluate.best_threshold(curve)
    print(json.dumps({
        "cases": len(records),
        "threshold_used": records[0]["threshold"],
        "answered_from_gold_page": round(sum(r["status"] == "grounded" for r in answerable) / len(answerable), 3),
        "refused_with_other_module_page": round(
            sum(r["status"] == "not_found" for r in refusable[: len(answerable)]) / len(answerable), 3),
        "refused_out_of_scope": round(
            sum(r["status"] == "not_found" for r in refusable[len(answerable):]) / max(len(ood), 1), 3),
        "citations_only_selection": all(r["cites_selection_only"] for r in records),
        "errors": sum(r["status"] == "error" for r in records),
        "best_threshold_for_selections": best,
    }, indent=2))


if __name__ == "__main__":
    main()
