"""The turn's record: the graph stamps each turn with an id and writes one record when the turn ends."""

from __future__ import annotations

import functools
import logging
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from langchain_core.messages import HumanMessage
from langgraph.config import get_config
from langgraph.runtime import get_runtime

from graph.context import Context, resolve_context
from graph.record_stores import default_store, location, lookup, purge_due, recording_on
from logic import selection
from logic.errors import AgentError
from logic.masking import mask_personal
from logic.not_found import label
from tools import manifest, search
from tools.records import RecordStore, store_errors
from tools.settings import get_settings, secrets

log = logging.getLogger(__name__)
# Callers (Agent) may pass these per invocation: the store to write to, and the id the turn gets.
RECORDS_KEY = "records_store"
TURN_ID_KEY = "turn_id"
# A grounded answer below this confidence, or with unsupported sentences, is flagged for review.
FLAG_BELOW = 0.5
QUESTION_CHARS = 2000


def _question(state: dict[str, Any]) -> str:
    """Return the user's message of this turn, masked and bounded."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, HumanMessage):
            text = message.content if isinstance(message.content, str) else str(message.content)
            return mask_personal(text, secrets())[:QUESTION_CHARS]
    return ""


def _score(value: Any) -> float | None:
    """Return a score as a rounded number, None when it is not one."""
    return round(float(value), 3) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _web_url(url: Any) -> bool:
    """Tell whether a URL is http(s) or relative, the only kinds a record may keep."""
    scheme = urlsplit(re.sub(r"[\x00-\x20\x7f]", "", str(url))).scheme.lower()
    return scheme in {"", "http", "https"}


def _sources(state: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Return the sections the turn cited, read back from the index; for a refusal the nearest ones it pointed to.

    The state is what a caller with state writes could have edited: a cited chunk's title and link come from the
    index by its id, and one the index does not hold (other than the reader's own selected text) is left out.
    """
    citations = [c for c in state.get("citations") or [] if isinstance(c, dict)]
    if citations:
        try:
            stored = search.stored_chunks(get_settings().data_dir, ctx.collection,
                                          [str(c.get("chunk_id", "")) for c in citations])
        except Exception as exc:  # noqa: BLE001 - a record must never fail a turn over the index
            log.warning("cited chunks not verified against the index: %s", exc)
            stored = {}
        out = []
        for c in citations:
            meta = stored.get(str(c.get("chunk_id", "")))
            if meta is not None:
                chunk = {"title": str(meta.get("title", "")), "heading_hierarchy": list(meta.get("heading_hierarchy")
                                                                                      or [])}
                out.append({"title": label(chunk), "source_url": str(meta.get("source_url", "")),  # type: ignore[arg-type]
                            "source": str(meta.get("source", "")), "score": _score(c.get("score"))})
            elif c.get("source") == selection.SOURCE:
                out.append({"title": "the reader's selected text", "source_url": "", "source": selection.SOURCE,
                            "score": _score(c.get("score"))})
        return out
    nearest = (state.get("not_found") or {}).get("nearest") or []
    return [{"title": str(s.get("title", "")), "source_url": str(s.get("source_url", "")),
             "source": str(s.get("source", "")), "score": _score(s.get("score"))}
            for s in nearest if isinstance(s, dict) and _web_url(s.get("source_url", ""))]


def flagged(state: dict[str, Any]) -> bool:
    """Tell whether an answer was given with low confidence or with sentences its sources do not support."""
    if state.get("status") != "grounded":
        return False
    grounding = state.get("grounding") or {}
    return (state.get("confidence") or 0.0) < FLAG_BELOW or not grounding.get("is_fully_grounded", True)


def _index_version(ctx: Context) -> str:
    """Return the collection's index version, "" when nothing is indexed."""
    try:
        info = manifest.load_cached(get_settings().data_dir)["collections"].get(ctx.collection) or {}
    except Exception:  # a record must never fail a turn over the manifest
        return ""
    return manifest.version(info)


def build_record(state: dict[str, Any], thread_id: str, ctx: Context, now: float) -> dict[str, Any]:
    """Describe a finished turn as a record (questions masked)."""
    error, started = state.get("error") or {}, state.get("started_at") or now
    return {
        "turn_id": state.get("turn_id") or uuid.uuid4().hex, "thread_id": thread_id, "started_at": started,
        "finished_at": now, "question": _question(state),
        "standalone_query": mask_personal(state.get("retrieval_query") or "", secrets())[:QUESTION_CHARS],
        "status": state.get("status", "error"), "not_found_reason": (state.get("not_found") or {}).get("reason"),
        "flagged": int(flagged(state)), "confidence": state.get("confidence"), "sources": _sources(state, ctx),
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
    store = lookup(named) if isinstance(named, str) else None
    return store or default_store(location(get_settings().data_dir))


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
        except _record_errors() as exc:  # losing a record must not lose the user's answer
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


def _record_errors() -> tuple[type[Exception], ...]:
    """Failures that lose a record, never the turn: the database's, or a store that cannot be opened."""
    return (*store_errors(), AgentError)
