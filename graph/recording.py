"""The turn's record: the graph stamps each turn with an id and writes one record when the turn ends."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.config import get_config
from langgraph.runtime import get_runtime

from graph.context import Context, SettingsError, resolve_context
from logic.errors import AgentError
from tools import manifest
from tools.masking import mask_personal
from tools.records import STORE_ERRORS, RecordStore

log = logging.getLogger(__name__)
RECORDS_ENV = "RAG_AGENT_RECORDS"
RETENTION_ENV = "RAG_AGENT_RECORDS_RETENTION_DAYS"
DEFAULT_RETENTION_DAYS = 90
# Callers (Agent) may pass these per invocation: the store to write to, and the id the turn gets.
RECORDS_KEY = "records_store"
TURN_ID_KEY = "turn_id"
# A grounded answer below this confidence, or with unsupported sentences, is flagged for review.
FLAG_BELOW = 0.5
QUESTION_CHARS = 2000
_stores: dict[str, RecordStore] = {}
_users: dict[str, int] = {}
_defaults: set[str] = set()
_purged: dict[str, float] = {}
_guard = threading.Lock()
_RECORD_ERRORS: tuple[type[Exception], ...] = (*STORE_ERRORS, AgentError)


def recording_on() -> bool:
    """Tell whether turns are recorded ($RAG_AGENT_RECORDS, default on)."""
    value = os.environ.get(RECORDS_ENV, "on").strip().lower()
    if value not in {"on", "off", "true", "false", "1", "0", "yes", "no", ""}:
        raise SettingsError(f"{RECORDS_ENV} must be on or off, got {value!r}")
    return value in {"on", "true", "1", "yes", ""}


def retention_days() -> int | None:
    """Return how many days records are kept ($RAG_AGENT_RECORDS_RETENTION_DAYS, default 90; 0 keeps them)."""
    raw = os.environ.get(RETENTION_ENV, "").strip()
    try:
        days = int(raw) if raw else DEFAULT_RETENTION_DAYS
    except ValueError:
        raise SettingsError(f"{RETENTION_ENV} must be a whole number of days, got {raw!r}") from None
    if days < 0:
        raise SettingsError(f"{RETENTION_ENV} must be 0 (keep forever) or more days, got {days}")
    return days or None


def location(data_dir: str | Path, url: str | None = None) -> str:
    """Return where the deployment's conversation database is: $RAG_AGENT_CHECKPOINTER's, else the SQLite file."""
    spec = (os.environ.get("RAG_AGENT_CHECKPOINTER", "") if url is None else url).strip()
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


def _question(state: dict[str, Any]) -> str:
    """Return the user's message of this turn, masked and bounded."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, HumanMessage):
            text = message.content if isinstance(message.content, str) else str(message.content)
            return mask_personal(text)[:QUESTION_CHARS]
    return ""


def _sources(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the sections the turn cited, or for a refusal the nearest ones it pointed to."""
    if state.get("citations"):
        return [{"title": " › ".join([c["title"], *c["heading_hierarchy"][:1]]), "source_url": c["source_url"],
                 "source": c["source"], "score": round(c["score"], 3)} for c in state["citations"]]
    nearest = (state.get("not_found") or {}).get("nearest") or []
    return [dict(s) for s in nearest]


def flagged(state: dict[str, Any]) -> bool:
    """Tell whether an answer was given with low confidence or with sentences its sources do not support."""
    if state.get("status") != "grounded":
        return False
    grounding = state.get("grounding") or {}
    return (state.get("confidence") or 0.0) < FLAG_BELOW or not grounding.get("is_fully_grounded", True)


def _index_version(ctx: Context) -> str:
    """Return the collection's index version, "" when nothing is indexed."""
    try:
        info = manifest.load(ctx.data_dir)["collections"].get(ctx.collection) or {}
    except Exception:  # a record must never fail a turn over the manifest
        return ""
    return manifest.version(info)


def build_record(state: dict[str, Any], thread_id: str, ctx: Context, now: float) -> dict[str, Any]:
    """Describe a finished turn as a record (questions masked)."""
    error, started = state.get("error") or {}, state.get("started_at") or now
    return {
        "turn_id": state.get("turn_id") or uuid.uuid4().hex, "thread_id": thread_id, "started_at": started,
        "finished_at": now, "question": _question(state),
        "standalone_query": mask_personal(state.get("retrieval_query") or "")[:QUESTION_CHARS],
        "status": state.get("status", "error"), "not_found_reason": (state.get("not_found") or {}).get("reason"),
        "flagged": int(flagged(state)), "confidence": state.get("confidence"), "sources": _sources(state),
        "top_score": state.get("top_score"), "model": state.get("model_used", ""),
        "embedder": state.get("embedding_model", ""), "tokens": int(state.get("tokens_used") or 0),
        "latency_ms": round((now - started) * 1000, 1), "error_code": error.get("code"),
        "index_version": _index_version(ctx), "retrieved": int(state.get("intent") == "question"),
    }


def iso(seconds: float) -> str:
    """Render UNIX seconds as an ISO-8601 UTC timestamp."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _store(configurable: dict[str, Any], ctx: Context) -> RecordStore:
    """Return the store the caller named, else the deployment's (the server path)."""
    named = configurable.get(RECORDS_KEY)
    store = _stores.get(named) if isinstance(named, str) else None
    return store or _default(location(ctx.data_dir))


def _default(where: str) -> RecordStore:
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


def write(state: dict[str, Any]) -> dict[str, Any]:
    """Record the finished turn (unless recording is off) and return its turn_id and timestamp."""
    configurable = get_config().get("configurable", {})
    now, ctx = time.time(), resolve_context(getattr(get_runtime(), "context", None))
    record = build_record(state, str(configurable.get("thread_id", "-")), ctx, now)
    if recording_on():
        try:
            store = _store(configurable, ctx)
            store.record_turn(record)
            purge_due(store, now)
        except _RECORD_ERRORS as exc:  # losing a record must not lose the user's answer
            log.warning("turn record not written: %s", exc)
    return {"turn_id": record["turn_id"], "timestamp": iso(now)}


def starts_turn(node: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Wrap the first node: give the turn its id and start time."""

    @functools.wraps(node)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        started = time.time()  # before classify: a rewrite by the chat model is part of the turn's latency
        update = node(*args, **kwargs)
        turn_id = get_config().get("configurable", {}).get(TURN_ID_KEY) or uuid.uuid4().hex
        return {**update, "turn_id": str(turn_id), "started_at": started}

    return run


def ends_turn(node: Callable[..., dict[str, Any]],
              route: Callable[[Any], str] | None = None) -> Callable[..., dict[str, Any]]:
    """Wrap a node after which a turn may end (always, or when `route` says END): record the turn there."""

    @functools.wraps(node)
    def run(state: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        update = node(state, *args, **kwargs)
        merged = {**state, **{k: v for k, v in update.items() if k != "messages"}}
        if route is not None and route(merged) != "__end__":
            return update
        return {**update, **write(merged)}

    return run
