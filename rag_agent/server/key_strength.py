"""The Agent Server refuses to start with a placeholder or short API token (`RAG_AGENT_API_KEYS`)."""

from __future__ import annotations

import re

from tools.settings import get_settings

# 24 characters: `openssl rand -hex 12` at the least; docs/deploy.md suggests `openssl rand -hex 24`.
MIN_LENGTH = 24
# Words of example and template values ("change-me", "your-token-here", "<secret>"): never a real token. Five
# letters or more, so a random token contains one by chance about once in a million.
_PLACEHOLDERS = ("changeme", "replaceme", "placeholder", "example", "yourtoken", "secret", "password", "token",
                 "xxxxx", "fixme", "dummy", "default", "admin")


class WeakKeyError(ValueError):
    """A token in `RAG_AGENT_API_KEYS` is a placeholder or too short for a server others can reach."""


def weakness(token: str) -> str | None:
    """Return why `token` must not guard a production server, or None when it may."""
    letters = re.sub(r"[^a-z0-9]", "", token.lower())
    if any(word in letters for word in _PLACEHOLDERS):
        return "looks like a placeholder"
    if len(token) < MIN_LENGTH:
        return f"is shorter than {MIN_LENGTH} characters"
    if len(set(token)) < 8:
        return "repeats too few characters"
    return None


def production() -> bool:
    """Tell whether this is the Agent Server proper, not `langgraph dev` (in-memory runtime, a developer's own)."""
    return get_settings().runtime_edition.strip().lower() not in {"inmem", ""}


def refuse_weak_keys(raw: str) -> None:
    """Raise WeakKeyError naming the user (never the token) whose token is weak, on the production server only."""
    if not production():
        return
    for entry in raw.split(","):
        user, _, token = entry.strip().partition(":")
        reason = weakness(token.strip()) if token.strip() else None  # malformed entries: auth.parse_api_keys
        if reason:
            raise WeakKeyError(f"RAG_AGENT_API_KEYS: the token of user {user.strip()!r} {reason}; the server will "
                               f"not start with it. Make one with: openssl rand -hex 24")
