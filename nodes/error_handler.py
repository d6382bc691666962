"""error_handler: turn a recorded failure into a user-safe reply with an error code."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AIMessage

from graph.state import State

log = logging.getLogger(__name__)

_ADVICE = {
    "INVALID_INPUT": "Please rephrase and try again.",
    "INDEX_MISSING": "Ingest some documents first.",
    "INDEX_MISMATCH": "Re-ingest the documents with the configured embedder.",
}


def error_handler(state: State) -> dict[str, Any]:
    """Reply with the error's code and safe message; the user's message stays in the thread."""
    error = state.get("error") or {"code": "INTERNAL_ERROR", "message": "something went wrong", "node": "?"}
    log.warning("turn failed in %s: %s %s", error["node"], error["code"], error["message"])
    advice = _ADVICE.get(error["code"], "Please try again in a moment.")
    message = error["message"][:1].upper() + error["message"][1:]
    answer = f"Sorry, I couldn't answer that. {message}. {advice} (error code: {error['code']})"
    return {"status": "error", "grounded": False, "answer": answer, "citations": [],
            "messages": [AIMessage(answer)]}
