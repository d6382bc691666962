"""Where turn records go: the process's stores by location, the recording and retention settings."""

from __future__ import annotations

import threading
from pathlib import Path

from graph.context import SettingsError
from tools.records import RecordStore
from tools.settings import get_settings

RECORDS_ENV = "RAG_AGENT_RECORDS"
_stores: dict[str, RecordStore] = {}
_users: dict[str, int] = {}
_defaults: set[str] = set()
_purged: dict[str, float] = {}
_guard = threading.Lock()


def recording_on() -> bool:
    """Tell whether turns are recorded ($RAG_AGENT_RECORDS, default on)."""
    value = get_settings().records.strip().lower()
    if value not in {"on", "off", "true", "false", "1", "0", "yes", "no", ""}:
        raise SettingsError(f"{RECORDS_ENV} must be on or off, got {value!r}")
    return value in {"on", "true", "1", "yes", ""}


def retention_days() -> int | None:
    """Return how many days records are kept ($RAG_AGENT_RECORDS_RETENTION_DAYS, default 90; 0 keeps them)."""
    return get_settings().records_retention_days or None


def location(data_dir: str | Path, url: str | None = None) -> str:
    """Return where the deployment's conversation database is: $RAG_AGENT_CHECKPOINTER's, else the SQLite file."""
    spec = (get_settings().checkpointer if url is None else url).strip()
    if spec.startswith(("postgresql://", "postgres://")):
        return spec
    if spec == "memory":
        return ":memory:"
    return spec.removeprefix("sqlite:///") or str(Path(data_dir) / "checkpoints.sqlite")


def register(key: str, store: RecordStore | None = None) -> RecordStore:
    """Return the process's store under `key` (a location), opening it (or adopting `store`) on first use."""
    with _guard:
        if key not in _stores:
            _stores[key] = store or RecordStore(key)
        _users[key] = _users.get(key, 0) + 1
        return _stores[key]


def forget(key: str) -> None:
    """Give up one use of the store under `key`; the last user closes it."""
    with _guard:
        _users[key] = _users.get(key, 1) - 1
        store = _stores.pop(key, None) if _users[key] <= 0 else None
    if store is not None:
        store.close()


def purge_due(store: RecordStore, now: float) -> None:
    """Delete expired records at most once an hour per store: retention costs no turn more than that."""
    days = retention_days()
    if days is None or now - _purged.get(store.where, 0.0) < 3600:
        return
    _purged[store.where] = now
    store.purge(now - days * 86400)


def lookup(key: str) -> RecordStore | None:
    """Return the store registered under `key`, if any."""
    return _stores.get(key)


def default_store(where: str) -> RecordStore:
    """Return the process's store at `where`, opened once and kept until `close_defaults`."""
    store = _stores.get(where)
    if store is None:
        store = register(where)
        _defaults.add(where)
    return store


def close_defaults() -> None:
    """Close the stores graph runs opened for themselves (tests call this between runs)."""
    while _defaults:
        forget(_defaults.pop())
