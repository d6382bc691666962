"""Fit the confidence coefficients (logic/confidence.py) on `rag-agent eval --report` records, and check them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, sys.path[0] is benchmarks/; the repo root makes the project's packages importable.
sys.path.insert(0, str(ROOT))

from logic import confidence  # noqa: E402
from rag_agent.evaluation import evaluate  # noqa: E402
from rag_agent.evaluation.figures import holds_keywords  # noqa: E402


def rows(records: list[dict[str, Any]]) -> list[tuple[tuple[float, float], bool]]:
    """Return (features, correct) for every question turn that retrieved something."""
    out = []
    for r in records:
        if r["gate_score"] is not None and r["retrieved"]:
            x = confidence.features(r["gate_score"], r["threshold"], [c["relevance"] for c in r["retrieved"]])
            out.append((x, evaluate.is_correct(r)))
    return out


def rescore(records: list[dict[str, Any]], weights: list[float]) -> list[dict[str, Any]]:
    """Recompute each record's confidence with the given [intercept, gate, margin] weights."""
    saved = confidence.INTERCEPT, confidence.GATE_WEIGHT, confidence.MARGIN_WEIGHT
    confidence.INTERCEPT, confidence.GATE_WEIGHT, confidence.MARGIN_WEIGHT = weights
    try:
        return [r | {"confidence": confidence.confidence(
            r["gate_score"], r["threshold"], [c["relevance"] for c in r["retrieved"]],
            (r.get("grounding") or {}).get("support", 1.0))} for r in records if r["status"] != "error"]
    finally:
        confidence.INTERCEPT, confidence.GATE_WEIGHT, confidence.MARGIN_WEIGHT = saved


def answer_rows(dump: list[dict[str, Any]], threshold: float) -> list[tuple[str, tuple[float, float], bool]]:
    """Return (site, answer features, right) for each answered question of a sites dump that can be judged.

    Right: an in-scope answer holding at least half its keywords; an answered near miss or far-off question is wrong.
    """
    out = []
    for r in dump:
        if r["status"] != "grounded" or r["set"] == "selection" or r["gate_score"] is None:
            continue
        if r["expected"] == "GROUNDED" and not r["answer_keywords"]:
            continue
        right = r["expected"] == "GROUNDED" and holds_keywords(r["answer"], r["answer_keywords"])
        x = (r["gate_score"] - threshold, confidence.stated(r["retrieval_query"], r["answer"]))
        out.append((r["site"], x, right))
    return out


def _score(weights: list[float], x: tuple[float, float]) -> float:
    """Return the answer confidence for features `x` under [intercept, gate, stated] weights."""
    return confidence._sigmoid(weights[0] + weights[1] * x[0] + weights[2] * x[1])


def _calibration(scored: list[tuple[float, bool]]) -> dict[str, Any]:
    """Return ECE over ten bins, the reliability table, and how often confident (≥ 0.9) answers are right."""
    bins: list[list[tuple[float, bool]]] = [[] for _ in range(10)]
    for p, right in scored:
        bins[min(int(p * 10), 9)].append((p, right))
    table = [{"bin": f"{i / 10:.1f}-{(i + 1) / 10:.1f}", "answers": len(b),
              "mean_confidence": round(sum(p for p, _ in b) / len(b), 3),
              "share_right": round(sum(r for _, r in b) / len(b), 3)} for i, b in enumerate(bins) if b]
    ece = sum(row["answers"] * abs(row["mean_confidence"] - row["share_right"]) for row in table) / len(scored)
    sure = [r for p, r in scored if p >= 0.9]
    return {"answers": len(scored), "ece": round(ece, 4), "confident": len(sure),
            "confident_right": round(sum(sure) / len(sure), 3) if sure else None, "table": table}


def sites_fit(dump_path: Path, threshold: float) -> None:
    """Fit the answer confidence on all sites of a dump; print each site's calibration with it left out of the fit."""
    rows_ = answer_rows(evaluate.load_jsonl(dump_path), threshold)
    weights = confidence.fit([(x, right) for _, x, right in rows_])
    print(f"fitted on all sites: ANSWER_INTERCEPT = {weights[0]:.2f}, ANSWER_GATE_WEIGHT = {weights[1]:.2f}, "
          f"ANSWER_STATED_WEIGHT = {weights[2]:.2f}")
    shipped = [confidence.ANSWER_INTERCEPT, confidence.ANSWER_GATE_WEIGHT, confidence.ANSWER_STATED_WEIGHT]
    for site in sorted({s for s, _, _ in rows_}):
        held_out = confidence.fit([(x, right) for s, x, right in rows_ if s != site])
        mine = [(x, right) for s, x, right in rows_ if s == site]
        print(json.dumps({"site": site, "left_out_of_fit": _calibration([(_score(held_out, x), r) for x, r in mine]),
                          "shipped": _calibration([(_score(shipped, x), r) for x, r in mine])}))


def main() -> None:
    """Fit on the training reports, then print the calibration on them and on any held-out reports."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("train", type=Path, nargs="*", help="eval --report JSON Lines to fit on")
    parser.add_argument("--check", type=Path, nargs="*", default=[], help="held-out reports: calibration only")
    parser.add_argument("--sites-dump", type=Path, help="fit the answer confidence on a benchmarks/sites.py --dump")
    parser.add_argument("--threshold", type=float, default=0.25, help="the gate threshold of the dump's indexes")
    args = parser.parse_args()
    if args.sites_dump:
        sites_fit(args.sites_dump, args.threshold)
        return
    train = [r for path in args.train for r in evaluate.load_jsonl(path)]
    weights = confidence.fit(rows(train))
    intercept, gate, lead = weights
    print(f"fitted: INTERCEPT = {intercept:.2f}, GATE_WEIGHT = {gate:.2f}, MARGIN_WEIGHT = {lead:.2f}")
    shipped = [confidence.INTERCEPT, confidence.GATE_WEIGHT, confidence.MARGIN_WEIGHT]
    for name, path_records in [("train", train), *[(str(p), evaluate.load_jsonl(p)) for p in args.check]]:
        for label, w in (("fitted", weights), ("shipped", shipped)):
            figures = evaluate.calibration(rescore(path_records, w))
            print(json.dumps({"set": name, "weights": label, **figures}))


if __name__ == "__main__":
    main()
