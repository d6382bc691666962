"""The conversation window: which old messages a turn removes so a thread's state stays bounded."""

from __future__ import annotations

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, RemoveMessage, trim_messages

from logic.annotations import SOURCES_HEADING
from logic.chunking import count_tokens

HISTORY_NOTE = ("_(Our conversation has grown long: I now take only its most recent part into account "
                "when reading your follow-up questions.)_")


def _tokens(messages: list[BaseMessage]) -> int:
    """Count tokens the way chunks are counted: the text of each message."""
    return sum(count_tokens(m.text) for m in messages)


def _answer_only(message: AnyMessage) -> AnyMessage:
    """Return a reply without its trailing Sources list: links a follow-up's reader needs no tokens for."""
    marker = f"\n\n{SOURCES_HEADING}\n"
    if message.type != "ai" or not isinstance(message.content, str) or marker not in message.content:
        return message
    return message.model_copy(update={"content": message.content.split(marker)[0]})


def recent_history(history: list[AnyMessage], budget: int) -> tuple[list[BaseMessage], bool]:
    """Return the latest messages within `budget` tokens, starting on a user turn, and whether turns were left out."""
    recent = trim_messages([_answer_only(m) for m in history], max_tokens=budget, strategy="last", start_on="human",
                           token_counter=_tokens)
    # Only a user turn left out counts: a leading reply (such as the one to /reset) carries no topic.
    return recent, sum(m.type == "human" for m in recent) < sum(m.type == "human" for m in history)


def window_removals(messages: list[AnyMessage], max_history: int) -> list[RemoveMessage]:
    """Return removals that leave at most `max_history - 1` messages, starting on a user message.

    The turn's reply is added afterwards, so the thread ends the turn with at most `max_history`.
    """
    keep = max_history - 1
    if len(messages) <= keep:
        return []
    start = len(messages) - keep
    # A window that opens on a reply has lost its question; drop up to the next user message.
    while start < len(messages) and not isinstance(messages[start], HumanMessage):
        start += 1
    if start == len(messages):  # no user message in the window (an invalid turn): plain cut
        start = len(messages) - keep
    return [RemoveMessage(id=m.id) for m in messages[:start] if m.id is not None]
