"""generate_not_found: say why the question was not answered and show the nearest sections, with links."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from graph.state import State
from logic.confidence import confidence
from logic.not_found import compose, sections
from logic.types import NotFound, NotFoundReason


def diagnose(state: State) -> NotFound:
    """Decide why the turn has no answer; retrieve or classify may already have said."""
    known = state.get("not_found")
    if known:
        return known
    retrieved, top = state.get("retrieved", []), state.get("gate_score")
    # The gate let the chunks through, so it was the generated answer that had no support.
    reason: NotFoundReason = (
        "unsupported" if state.get("grounded") else "below_threshold" if retrieved else "no_results")
    return {"reason": reason, "best_score": top, "threshold": state.get("threshold"), "nearest": sections(retrieved)}


def generate_not_found(state: State) -> dict[str, Any]:
    """Reply honestly that there is no answer, saying why, without inventing one."""
    query = state.get("retrieval_query", "").rstrip("?.! ")
    found = diagnose(state)
    answer = compose(query, found, state.get("filters") or {}, bool(state.get("context")))
    # Confidence that the best section answers after all: low when refusing was right.
    relevances = [c.get("relevance", c["score"]) for c in state.get("retrieved", [])]
    return {"status": "not_found", "grounded": False, "answer": answer, "citations": [], "not_found": found,
            "confidence": confidence(state.get("gate_score"), state.get("threshold"), relevances),
            "messages": [AIMessage(answer)]}
