"""Where a turn goes next: pure functions that read decisions nodes wrote into state."""

from __future__ import annotations

from typing import Literal

from graph.state import State

# Turns that need no documentation: generate_grounded writes their short fixed reply.
CANNED = ("chitchat", "reset")


def route_after_classify(
    state: State,
) -> Literal["retrieve", "generate_grounded", "generate_not_found", "error_handler"]:
    """Send questions to retrieval, out-of-scope requests to not-found, chit-chat and reset to the reply writer."""
    if state.get("error"):
        return "error_handler"
    intent = state.get("intent")
    if intent == "out_of_scope":
        return "generate_not_found"
    return "generate_grounded" if intent in CANNED else "retrieve"


def route_after_retrieve(state: State) -> Literal["score_gate", "error_handler"]:
    """Gate the retrieved chunks unless retrieval failed."""
    return "error_handler" if state.get("error") else "score_gate"


def route_after_score_gate(state: State) -> Literal["generate_grounded", "generate_not_found", "error_handler"]:
    """Answer only when the gate judged the chunks relevant enough."""
    if state.get("error"):
        return "error_handler"
    return "generate_grounded" if state.get("grounded") else "generate_not_found"


def route_after_generate_grounded(
    state: State,
) -> Literal["generate_not_found", "error_handler", "__end__"]:
    """Finish, or fall back to not-found when the answer kept no valid citation."""
    if state.get("error"):
        return "error_handler"
    return "__end__" if state.get("citations") or state.get("intent") in CANNED else "generate_not_found"
