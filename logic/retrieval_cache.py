"""Per-session retrieval cache: a repeated standalone query on a thread reuses its ranked chunks."""

from __future__ import annotations

import copy
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

# Bounded so a long-running server keeps a fixed footprint; oldest entries go first.
MAX_ENTRIES = 512
_entries: OrderedDict[Hashable, dict[str, Any]] = OrderedDict()
_lock = threading.Lock()


def key(thread_id: str, index_version: str, *parts: Any) -> Hashable:
    """Build a cache key; the index version makes a re-ingest miss every older entry."""
    return (thread_id, index_version, *(tuple(sorted(p.items())) if isinstance(p, dict) else p for p in parts))


def text_hash(text: str) -> str:
    """Return a short fingerprint of a (possibly long) text selection."""
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text else ""


def get(cache_key: Hashable) -> dict[str, Any] | None:
    """Return a copy of the cached result, or None."""
    with _lock:
        if cache_key not in _entries:
            return None
        _entries.move_to_end(cache_key)
        return copy.deepcopy(_entries[cache_key])


def put(cache_key: Hashable, result: dict[str, Any]) -> None:
    """Store a result, evicting the least recently used entry beyond the bound."""
    with _lock:
        _entries[cache_key] = copy.deepcopy(result)
        _entries.move_to_end(cache_key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def clear() -> None:
    """Forget every entry (tests)."""
    with _lock:
        _entries.clear()
