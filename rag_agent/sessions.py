"""Conversation sessions: which threads a checkpointer holds, how idle they are, and durations."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from logic import durations
from logic.durations import format_idle, parse_duration

_THREADS_SQL = "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''"
# Re-exported for the CLI; the clock is read through `durations` so one monkeypatch moves it everywhere.
__all__ = ["Session", "format_idle", "list_sessions", "parse_duration", "session", "thread_ids"]


@dataclass(frozen=True)
class Session:
    """One conversation thread as the store holds it."""

    thread_id: str
    turns: int
    last_activity: datetime

    def idle(self, now: datetime | None = None) -> timedelta:
        """Return how long the thread has been idle."""
        return (now or durations.utcnow()) - self.last_activity


def _pooled_postgres(saver: BaseCheckpointSaver[Any]) -> bool:
    """Tell whether the saver is Postgres over a pool, without importing psycopg for the other stores."""
    postgres, pool = sys.modules.get("langgraph.checkpoint.postgres"), sys.modules.get("psycopg_pool")
    return bool(postgres and pool and isinstance(saver, postgres.PostgresSaver)
                and isinstance(saver.conn, pool.ConnectionPool))


def thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """Return every thread id the store holds, sorted."""
    if isinstance(saver, InMemorySaver):
        ids = set(saver.storage)
    elif isinstance(saver, SqliteSaver):
        with saver.cursor(transaction=False) as cur:
            ids = {row[0] for row in cur.execute(_THREADS_SQL)}
    elif _pooled_postgres(saver):
        with saver.conn.connection() as conn:  # type: ignore[attr-defined]
            ids = {row["thread_id"] for row in conn.execute(_THREADS_SQL)}
    else:  # any other saver: walk its checkpoints (slow, but only for listing)
        ids = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    return sorted(str(i) for i in ids)


def session(saver: BaseCheckpointSaver[Any], thread_id: str) -> Session | None:
    """Describe a thread from its latest checkpoint, or None when it has none."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    found = saver.get_tuple(config)
    if found is None:
        return None
    values = found.checkpoint.get("channel_values", {})
    turns = values.get("turns")
    if turns is None:  # threads from before the counter existed
        turns = sum(isinstance(m, HumanMessage) for m in values.get("messages", []))
    return Session(thread_id, int(turns), datetime.fromisoformat(found.checkpoint["ts"]))


def list_sessions(saver: BaseCheckpointSaver[Any]) -> list[Session]:
    """Return every thread, most recently active first."""
    found = [s for t in thread_ids(saver) if (s := session(saver, t)) is not None]
    return sorted(found, key=lambda s: s.last_activity, reverse=True)
