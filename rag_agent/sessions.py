"""Conversation sessions: which threads a checkpointer holds, how idle they are, and durations."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.context import SettingsError

SESSION_TTL_ENV = "RAG_AGENT_SESSION_TTL"
DEFAULT_TTL = "24h"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_THREADS_SQL = "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''"


def parse_duration(text: str, name: str = "duration", *, allow_zero: bool = False) -> timedelta:
    """Parse `30m`, `24h`, `7d` (also s and w) into a timedelta, naming `name` on a bad value."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) < 0 or (float(match.group(1)) == 0 and not allow_zero):
        least = "a number" if allow_zero else "a positive number"
        raise SettingsError(f"{name}: invalid duration {text!r}; use {least} and a unit, e.g. 30m, 24h, 7d")
    return timedelta(**{_UNITS[match.group(2).lower()]: float(match.group(1))})


def session_ttl(value: str | None = None) -> timedelta | None:
    """Return the idle time after which a thread starts fresh ($RAG_AGENT_SESSION_TTL); `off` disables it."""
    text = (os.environ.get(SESSION_TTL_ENV) or DEFAULT_TTL) if value is None else value
    if text.strip().lower() in {"off", "never", "0"}:
        return None
    return parse_duration(text, SESSION_TTL_ENV)


def utcnow() -> datetime:
    """Return the current time in UTC (a seam for tests)."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class Session:
    """One conversation thread as the store holds it."""

    thread_id: str
    turns: int
    last_activity: datetime

    def idle(self, now: datetime | None = None) -> timedelta:
        """Return how long the thread has been idle."""
        return (now or utcnow()) - self.last_activity


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


def format_idle(delta: timedelta) -> str:
    """Render an idle time compactly, e.g. 3d4h, 2h5m, 40s."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    return f"{minutes}m{seconds}s" if minutes else f"{seconds}s"
