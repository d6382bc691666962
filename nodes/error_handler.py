"""error_handler: turn a recorded failure into a user-safe reply with an error code."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

from graph.state import State

log = logging.getLogger(__name__)

# Outages are worth retrying; other errors already say what to do in their message.
_RETRYABLE = {"EMBEDDING_UNAVAILABLE", "RETRIEVAL_UNAVAILABLE", "LLM_UNAVAILABLE", "LLM_RATE_LIMITED",
              "TURN_TIMEOUT"}


def error_handler(state: State) -> dict[str, Any]:
    """Reply with the error's code and safe message; the user's message stays in the thread."""
    error = state.get("error") or {"code": "INTERNAL_ERROR", "message": "something went wrong", "node": "?"}
    log.warning("turn failed in %s: %s %s", error["node"], error["code"], error["message"])
    advice = " Please try again in a moment." if error["code"] in _RETRYABLE else ""
    answer = f"Sorry, I couldn't answer that: {error['message']}.{advice} (error code: {error['code']})"
    reply = {"status": "error", "grounded": False, "answer": answer, "citations": []}
    if error["code"] == "INVALID_INPUT":
        return reply | refused(state)
    return reply | {"messages": [AIMessage(answer)]}


def refused(state: State) -> dict[str, Any]:
    """Take a refused message back out of the thread: refused input is answered, never stored."""
    messages = state.get("messages", [])
    last = messages[-1] if messages else None
    # Only this turn's message: classify refuses a turn whose last message is not the user's before counting it.
    if not isinstance(last, HumanMessage) or last.id is None:
        return {}
    return {"messages": [RemoveMessage(id=last.id)], "turns": max(0, state.get("turns", 1) - 1)}
