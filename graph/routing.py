"""Where a turn goes next: pure functions that read decisions nodes wrote into state."""

from __future__ import annotations

from typing import Literal

from graph.state import State


def route_after_classify(state: State) -> Literal["retrieve", "error_handler", "__end__"]:
    """Send questions to retrieval; chit-chat and reset were answered by classify itself."""
    if state.get("error"):
        return "error_handler"
    if state.get("intent") == "question":
        return "retrieve"
    return "__end__"


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
    return "__end__" if state.get("citations") else "generate_not_found"
