"""error_handler: turn a recorded failure into a user-safe reply with an error code."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AIMessage

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
    return {"status": "error", "grounded": False, "answer": answer, "citations": [],
            "messages": [AIMessage(answer)]}
