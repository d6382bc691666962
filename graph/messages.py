"""The messages channel: a message that cannot be read is kept as a marked stand-in for classify to refuse."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, MessageLikeRepresentation, convert_to_messages
from langgraph.graph.message import Messages, add_messages

from logic.validation import UNREADABLE

# Longer than any accepted question (Context.max_question_chars is at most 10,000): never written to the
# thread, not even to the checkpoint that records the run's input.
CHANNEL_LIMIT = 10_000


def _problem(item: Any) -> str:
    """Say, without echoing the value, why a client's message could not be read."""
    content = item.get("content") if isinstance(item, dict) else item[1] if isinstance(item, tuple | list) else None
    if content is not None and not isinstance(content, str | list):
        return f"the message content must be plain text, not {type(content).__name__}"
    if isinstance(content, list):
        return "the message content must be plain text, not a list of parts"
    return "each message needs a role ('user') and text content"


def _stand_in(problem: str) -> HumanMessage:
    """Return the empty, marked message that takes the place of one the channel refuses to store."""
    return HumanMessage(content="", additional_kwargs={UNREADABLE: problem})


def _readable(items: list[Any]) -> list[MessageLikeRepresentation]:
    """Convert each item to a message; one that cannot be converted or is oversized becomes a stand-in."""
    out: list[MessageLikeRepresentation] = []
    for item in items:
        try:
            [message] = convert_to_messages([item])
        except (ValueError, TypeError, NotImplementedError):  # pydantic's ValidationError is a ValueError
            out.append(_stand_in(_problem(item)))
            continue
        size = len(message.content) if isinstance(message, HumanMessage) else 0  # replies are the agent's own
        if size > CHANNEL_LIMIT:
            message = _stand_in(f"the question is too long ({size} characters; the limit is at most "
                                f"{CHANNEL_LIMIT}); shorten it")
        out.append(message)
    return out


def accept_messages(left: Messages, right: Messages) -> Messages:
    """Merge like `add_messages`; an unreadable or oversized client message becomes a refusal, not a crash."""
    items = right if isinstance(right, list) else [right]
    return add_messages(left, _readable(list(items)))
