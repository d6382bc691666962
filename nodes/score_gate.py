"""score_gate: answer only when the best chunk clears the calibrated threshold."""

from __future__ import annotations

from typing import Any

from graph.state import State


def score_gate(state: State) -> dict[str, Any]:
    """Record whether the retrieved chunks are relevant enough to answer from."""
    top, threshold = state.get("top_score"), state.get("threshold")
    grounded = bool(state.get("retrieved")) and top is not None and threshold is not None and top >= threshold
    return {"grounded": grounded}
