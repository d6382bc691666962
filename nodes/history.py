"""The conversation window: which old messages a turn removes so a thread's state stays bounded."""

from __future__ import annotations

from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage


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
