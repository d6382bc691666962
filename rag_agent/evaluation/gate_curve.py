"""Gate calibration: balanced accuracy of the score gate at each threshold, the chosen one, and its plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any


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
