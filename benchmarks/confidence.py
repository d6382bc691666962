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


def main() -> None:
    """Fit on the training reports, then print the calibration on them and on any held-out reports."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("train", type=Path, nargs="+", help="eval --report JSON Lines to fit on")
    parser.add_argument("--check", type=Path, nargs="*", default=[], help="held-out reports: calibration only")
    args = parser.parse_args()
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
