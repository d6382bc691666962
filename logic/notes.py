"""Notes about the conversation itself that go with an answer (never into the stored history)."""

from __future__ import annotations

from typing import Any

from logic.history import HISTORY_NOTE

EXPIRED_NOTE = "(Our earlier conversation on this thread expired after {ttl} without activity; this starts a new one.)"


def before(state: Any) -> str:
    """Return what precedes the answer: the expiry note when classify found the thread expired."""
    ttl = state.get("expired_after") or ""
    return EXPIRED_NOTE.format(ttl=ttl) + "\n\n" if ttl else ""


def after(state: Any) -> str:
    """Return what follows the answer: the history note, the one time classify decided it is due."""
    return f"\n\n{HISTORY_NOTE}" if state.get("history_note") else ""


def with_notes(state: Any, answer: str) -> str:
    """Return the answer the user reads: notes around what the thread stores."""
    return before(state) + answer + after(state)
