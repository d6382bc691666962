"""score_gate: answer only when the answerability score of the retrieved sections clears the calibrated threshold."""

from __future__ import annotations

from typing import Any

from graph.state import State
from logic.ranking import clears


def score_gate(state: State) -> dict[str, Any]:
    """Record whether the retrieved chunks are relevant enough to answer from."""
    return {"grounded": bool(state.get("retrieved")) and clears(state.get("gate_score"), state.get("threshold"))}
