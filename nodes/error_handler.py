"""error_handler: turn a recorded failure into a user-safe reply with an error code."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage

from graph.state import State
from logic.errors import error_reply
from logic.notes import with_notes

log = logging.getLogger(__name__)


def _refused(messages: list[AnyMessage]) -> list[RemoveMessage]:
    """Take a refused message back out of the thread: a turn refused as invalid adds nothing to the conversation."""
    last = messages[-1] if messages else None
    return [RemoveMessage(id=last.id)] if isinstance(last, HumanMessage) and last.id else []


def error_handler(state: State) -> dict[str, Any]:
    """Reply with the error's code and safe message; a failed question stays in the thread, a refused one does not."""
    error = state.get("error") or {"code": "INTERNAL_ERROR", "message": "something went wrong", "node": "?"}
    log.warning("turn failed in %s: %s %s", error["node"], error["code"], error["message"])
    reply = error_reply(error["code"], error["message"])
    out = {"status": "error", "grounded": False, "answer": with_notes(state, reply), "citations": []}
    if error["code"] != "INVALID_INPUT":
        return out | {"messages": [AIMessage(reply)]}
    # classify does not count a turn it refuses; a later node's refusal (a bad filter) takes the count back.
    uncount = {} if error["node"] == "classify" else {"turns": max(0, state.get("turns", 1) - 1)}
    return out | {"messages": _refused(state.get("messages", []))} | uncount
