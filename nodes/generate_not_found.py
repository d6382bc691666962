"""generate_not_found: say why the question was not answered and show the nearest sections, with links."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from graph.state import State
from logic.confidence import confidence
from logic.heuristics import asked_question
from logic.not_found import compose, named_ask, sections
from logic.notes import with_notes
from logic.types import NotFound, NotFoundReason


def diagnose(state: State) -> NotFound:
    """Decide why the turn has no answer; retrieve may already have said."""
    known = state.get("not_found")
    if known:
        return known
    if state.get("intent") == "out_of_scope":  # classify judged no documentation could answer it
        return {"reason": "out_of_scope_intent", "best_score": None, "threshold": None, "nearest": []}
    retrieved, top = state.get("retrieved", []), state.get("gate_score")
    # The gate let the chunks through, so it was the generated answer that had no support.
    reason: NotFoundReason = (
        "unsupported" if state.get("grounded") else "below_threshold" if retrieved else "no_results")
    return {"reason": reason, "best_score": top, "threshold": state.get("threshold"), "nearest": sections(retrieved)}


def generate_not_found(state: State) -> dict[str, Any]:
    """Reply honestly that there is no answer, saying why, without inventing one."""
    query = named_ask(asked_question(state.get("messages", []), state.get("retrieval_query", "")))
    found = diagnose(state)
    filters, selection = state.get("applied_filters") or {}, bool(state.get("selection"))
    answer = compose(query, found, filters, selection)
    # Confidence that the best section answers after all: low when refusing was right.
    relevances = [c.get("relevance", c["score"]) for c in state.get("retrieved", [])]
    return {"status": "not_found", "grounded": False, "answer": with_notes(state, answer), "citations": [],
            "not_found": found,
            "confidence": confidence(state.get("gate_score"), state.get("threshold"), relevances),
            # The chat message links the nearest sections in Markdown, so any chat UI shows them as links.
            "messages": [AIMessage(compose(query, found, filters, selection, markdown=True))]}
