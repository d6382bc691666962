"""Turn records and feedback for callers: the deployment's store, ratings (also sent to LangSmith), session counts."""

from __future__ import annotations

import logging
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.context import Context
from graph.record_stores import forget, location, recording_on, register
from graph.recording import build_record, iso
from logic.errors import AgentError, InvalidInputError
from logic.masking import mask_personal
from tools.records import RecordStore, UnknownTurnError, store_errors
from tools.settings import get_settings, secrets

__all__ = ["RecordStore", "UnknownTurnError", "close_store", "open_store", "parse_rating", "record_feedback",
           "record_turn", "store_for"]
log = logging.getLogger(__name__)
_RATINGS = {"up": 1, "+1": 1, "1": 1, "down": -1, "-1": -1}
LANGSMITH_KEY = "user_rating"


def open_store(data_dir: str | Path | None = None, url: str | None = None) -> RecordStore:
    """Return the records store in the deployment's conversation database.

    Args:
        data_dir: folder of the default SQLite file (default: $RAG_AGENT_DATA_DIR or .rag-agent).
        url: the checkpointer URL (default: $RAG_AGENT_CHECKPOINTER); `postgresql://…` uses Postgres.

    """
    return register(location(data_dir if data_dir is not None else get_settings().data_dir, url))


def store_for(saver: BaseCheckpointSaver[Any], data_dir: str | Path) -> tuple[str, RecordStore]:
    """Return (key, store) for the database a checkpointer uses; an in-memory one gets in-memory records."""
    if isinstance(saver, InMemorySaver):
        key = f"memory:{uuid.uuid4().hex}"
        return key, register(key, RecordStore(":memory:"))
    if isinstance(saver, SqliteSaver):
        rows = saver.conn.execute("PRAGMA database_list").fetchall()
        path = next((str(r[2]) for r in rows if r[1] == "main" and r[2]), "")
        key = path or f"memory:{uuid.uuid4().hex}"
        return key, register(key, None if path else RecordStore(":memory:"))
    postgres = sys.modules.get("rag_agent.pg_checkpointer")  # imported only once a Postgres store was opened
    if postgres is not None and isinstance(saver, postgres.PooledPostgresSaver) and hasattr(saver.conn, "conninfo"):
        key = str(saver.conn.conninfo)
        return key, register(key)
    key = location(data_dir)
    return key, register(key)


def close_store(key: str) -> None:
    """Give up a store obtained from `open_store`/`store_for` (closed when no one else uses it)."""
    forget(key)


def record_turn(record: dict[str, Any], store: RecordStore | None = None) -> None:
    """Store one turn record (see tools.records.TURN_COLUMNS) with its question masked."""
    masked = {**record, "question": mask_personal(str(record.get("question", "")), secrets())}
    (store or open_store()).record_turn(masked)


def record_failure(store: RecordStore, state: dict[str, Any], thread_id: str, question: Any,
                   turn: tuple[str, float], ctx: Context) -> dict[str, Any]:
    """Record a turn that failed outside the graph (bad input, a store failure); return the state stamped."""
    turn_id, started_at = turn
    now = time.time()
    if question is None:  # resume and reset: not a question of the user's
        return state
    text = question if isinstance(question, str) else repr(question)
    record = build_record({**state, "turn_id": turn_id, "started_at": started_at,
                           "messages": [HumanMessage(content=text)]}, thread_id, ctx, now)
    if recording_on():
        try:
            store.record_turn(record)
        except _record_errors() as exc:  # the user still gets the error they caused
            log.warning("turn record not written: %s", exc)
    return {**state, "turn_id": turn_id, "timestamp": iso(now)}


def parse_rating(rating: int | str) -> int:
    """Return +1 or -1 from 1/-1, "up"/"down" or "+1"/"-1"; name the problem otherwise."""
    if isinstance(rating, int) and not isinstance(rating, bool) and rating in (1, -1):
        return rating
    if isinstance(rating, str) and rating.strip().lower() in _RATINGS:
        return _RATINGS[rating.strip().lower()]
    raise InvalidInputError(f"rating must be up (+1) or down (-1), got {rating!r}")


def record_feedback(turn_id: str, rating: int | str, comment: str | None = None, *,
                    store: RecordStore | None = None) -> dict[str, Any]:
    """Store a rating of a recorded turn (raises UnknownTurnError for an unknown id) and send it to LangSmith.

    Returns what was stored, with `langsmith`: whether LangSmith feedback was sent (tracing on).
    """
    value = parse_rating(rating)
    if comment is not None and not isinstance(comment, str):
        raise InvalidInputError(f"comment must be text, got {type(comment).__name__}")
    masked = mask_personal(comment.strip(), secrets())[:2000] if comment and comment.strip() else None
    (store or open_store()).record_feedback(turn_id, value, masked)
    sent = _send_langsmith(turn_id, value, masked)
    return {"turn_id": turn_id, "rating": value, "comment": masked, "langsmith": sent}


def _send_langsmith(turn_id: str, rating: int, comment: str | None) -> bool:
    """With tracing on, attach the rating to the turn's LangSmith run (its run id is the turn id)."""
    from langsmith import utils

    if not utils.tracing_is_enabled():
        return False
    try:
        from langsmith import Client

        run_id = uuid.UUID(turn_id)
        # score 1 for up, 0 for down: LangSmith charts a thumbs rating as a 0-1 score.
        Client().create_feedback(run_id=run_id, key=LANGSMITH_KEY, score=1 if rating > 0 else 0, comment=comment)
    except Exception as exc:  # noqa: BLE001 - the rating is stored; tracing is optional
        log.warning("LangSmith feedback not sent for turn %s: %s", turn_id, exc)
        return False
    return True


def _record_errors() -> tuple[type[Exception], ...]:
    """Failures that lose a record, never the turn: the database's, or a store that cannot be opened."""
    return (*store_errors(), AgentError)
