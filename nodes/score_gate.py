"""score_gate: answer only when the best chunk clears the calibrated threshold."""

from __future__ import annotations

from typing import Any

from graph.state import State


def clears(top: float | None, threshold: float | None) -> bool:
    """Tell whether a retrieval score passes the gate: the one rule, also used by retrieve's filter check."""
    return top is not None and threshold is not None and top >= threshold


def score_gate(state: State) -> dict[str, Any]:
    """Record whether the retrieved chunks are relevant enough to answer from."""
    return {"grounded": bool(state.get("retrieved")) and clears(state.get("top_score"), state.get("threshold"))}
