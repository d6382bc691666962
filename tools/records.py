"""Turn records and feedback in the conversation database: SQLite by default, Postgres in production."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # psycopg is imported only when a Postgres store is opened
    from psycopg import Connection
    from psycopg.rows import DictRow
    from psycopg_pool import ConnectionPool

from logic.errors import InvalidInputError, StorageError

# Column order of a turn record; `sources` is a JSON list of {title, source_url, source, score}.
TURN_COLUMNS = ("turn_id", "thread_id", "started_at", "finished_at", "question", "standalone_query", "status",
                "not_found_reason", "flagged", "confidence", "sources", "top_score", "model", "embedder",
                "tokens", "latency_ms", "error_code", "index_version", "retrieved")
# Portable DDL: SQLite accepts every Postgres type name used here. Times are UNIX seconds (UTC).
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS rag_agent_turns (
        turn_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, started_at DOUBLE PRECISION NOT NULL,
        finished_at DOUBLE PRECISION NOT NULL, question TEXT NOT NULL, standalone_query TEXT NOT NULL,
        status TEXT NOT NULL, not_found_reason TEXT, flagged INTEGER NOT NULL, confidence DOUBLE PRECISION,
        sources TEXT NOT NULL, top_score DOUBLE PRECISION, model TEXT NOT NULL, embedder TEXT NOT NULL,
        tokens INTEGER NOT NULL, latency_ms DOUBLE PRECISION NOT NULL, error_code TEXT,
        index_version TEXT NOT NULL, retrieved INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS rag_agent_turns_finished ON rag_agent_turns (finished_at)",
    "CREATE INDEX IF NOT EXISTS rag_agent_turns_thread ON rag_agent_turns (thread_id)",
    """CREATE TABLE IF NOT EXISTS rag_agent_feedback (
        turn_id TEXT PRIMARY KEY, rating INTEGER NOT NULL, comment TEXT, created_at DOUBLE PRECISION NOT NULL)""",
)
_INSERT = (f"INSERT INTO rag_agent_turns ({', '.join(TURN_COLUMNS)}) VALUES ({', '.join(['?'] * len(TURN_COLUMNS))})"
           " ON CONFLICT (turn_id) DO NOTHING")
_FEEDBACK = ("INSERT INTO rag_agent_feedback (turn_id, rating, comment, created_at) VALUES (?, ?, ?, ?) "
             "ON CONFLICT (turn_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment, "
             "created_at = excluded.created_at")
_SESSIONS = ("SELECT thread_id, MIN(started_at) AS created_at, COUNT(*) AS turns, SUM(retrieved) AS retrievals, "
             "SUM(tokens) AS tokens FROM rag_agent_turns GROUP BY thread_id")
_FEEDBACK_ROWS = ("SELECT f.turn_id, f.rating, f.comment, f.created_at, t.question, t.status FROM rag_agent_feedback f "
                  "JOIN rag_agent_turns t ON t.turn_id = f.turn_id WHERE t.finished_at >= ? ORDER BY f.created_at")


def store_errors() -> tuple[type[Exception], ...]:
    """Failures of a records database: SQLite's, and Postgres's once psycopg is loaded."""
    psycopg = sys.modules.get("psycopg")
    return (sqlite3.Error, *((psycopg.Error,) if psycopg else ()))


class UnknownTurnError(InvalidInputError):
    """Feedback named a turn id the records do not hold."""


class RecordStore:
    """Turn records and feedback over one SQLite file or one Postgres database (DB-API, `?` placeholders)."""

    def __init__(self, where: str) -> None:
        """Open (and create the tables of) a SQLite path, `:memory:`, or a `postgresql://` URL."""
        self.where = where
        self._lock = threading.Lock()
        self._pool: ConnectionPool[Connection[DictRow]] | None = None
        opening: tuple[type[Exception], ...] = (OSError, *store_errors())
        self._sqlite: sqlite3.Connection | None = None
        try:
            if where.startswith(("postgresql://", "postgres://")):
                from psycopg import Error as PostgresError
                from psycopg.rows import dict_row
                from psycopg_pool import ConnectionPool

                opening = (*opening, PostgresError)
                # No per-checkout health check (a round trip per record); a connection broken by a server
                # restart fails one write, which is logged, and the pool replaces it.
                self._pool = ConnectionPool(where, min_size=1, max_size=2, open=True, configure=_fast_commits,
                                            kwargs={"autocommit": True, "prepare_threshold": None,
                                                    "row_factory": dict_row})
            else:
                if where != ":memory:":
                    Path(where).parent.mkdir(parents=True, exist_ok=True)
                self._sqlite = sqlite3.connect(where, check_same_thread=False, timeout=10, isolation_level=None)
                self._sqlite.row_factory = sqlite3.Row
                # WAL + NORMAL: a record survives a killed process; each write costs no fsync (the <= 5 ms goal).
                self._sqlite.execute("PRAGMA journal_mode = WAL")
                self._sqlite.execute("PRAGMA synchronous = NORMAL")
            for statement in _SCHEMA:
                self._execute(statement)
        except opening as exc:
            raise StorageError(f"cannot use the records database: {exc}") from exc

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        """Yield a cursor of this store's database (one at a time for SQLite)."""
        if self._pool is not None:
            with self._pool.connection() as conn, conn.cursor() as cur:
                yield cur
            return
        assert self._sqlite is not None
        with self._lock:
            yield self._sqlite.cursor()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one statement and return its rows as dicts."""
        if self._pool is not None:
            sql = sql.replace("?", "%s")
        with self._cursor() as cur:
            cur.execute(sql, tuple(params))
            rows = cur.fetchall() if cur.description else []
        return [dict(row) for row in rows]

    def close(self) -> None:
        """Release the connection(s)."""
        if self._pool is not None:
            self._pool.close()
        if self._sqlite is not None:
            self._sqlite.close()

    def record_turn(self, record: dict[str, Any]) -> None:
        """Store one turn's record (a dict with TURN_COLUMNS keys); a repeated turn id is ignored."""
        values = [_storable(record.get(c)) for c in TURN_COLUMNS]
        values[TURN_COLUMNS.index("sources")] = json.dumps(record.get("sources") or [], ensure_ascii=False)
        self._execute(_INSERT, values)

    def turn(self, turn_id: str) -> dict[str, Any] | None:
        """Return one turn's record, or None when the id is unknown."""
        rows = self._execute("SELECT * FROM rag_agent_turns WHERE turn_id = ?", (turn_id,))
        return _decoded(rows[0]) if rows else None

    def record_feedback(self, turn_id: str, rating: int, comment: str | None = None) -> None:
        """Store a +1/-1 rating (and comment) for a recorded turn; a second rating replaces the first."""
        if isinstance(rating, bool) or rating not in (1, -1):
            raise InvalidInputError(f"rating must be +1 (up) or -1 (down), got {rating!r}")
        if comment is not None and not isinstance(comment, str):
            raise InvalidInputError(f"comment must be text, got {type(comment).__name__}")
        if not isinstance(turn_id, str) or self.turn(turn_id) is None:
            raise UnknownTurnError(f"no recorded turn has the id {turn_id!r}; use the turn_id of a response")
        self._execute(_FEEDBACK, (turn_id, rating, _storable((comment or "").strip() or None), time.time()))

    def turns(self, since: float = 0.0) -> list[dict[str, Any]]:
        """Return the records that finished at or after `since` (UNIX seconds), oldest first."""
        rows = self._execute("SELECT * FROM rag_agent_turns WHERE finished_at >= ? ORDER BY finished_at", (since,))
        return [_decoded(r) for r in rows]

    def feedback(self, since: float = 0.0) -> list[dict[str, Any]]:
        """Return the ratings of turns that finished at or after `since`, with their questions."""
        return self._execute(_FEEDBACK_ROWS, (since,))

    def sessions(self) -> dict[str, dict[str, Any]]:
        """Return per thread: created_at, turns, retrievals and tokens."""
        return {r["thread_id"]: r for r in self._execute(_SESSIONS)}

    def purge(self, before: float) -> int:
        """Delete records (and their feedback) that finished before `before`; return how many turns went."""
        self._execute("DELETE FROM rag_agent_feedback WHERE turn_id IN "
                      "(SELECT turn_id FROM rag_agent_turns WHERE finished_at < ?)", (before,))
        gone = self._execute("SELECT COUNT(*) AS n FROM rag_agent_turns WHERE finished_at < ?", (before,))
        self._execute("DELETE FROM rag_agent_turns WHERE finished_at < ?", (before,))
        return int(gone[0]["n"])


def _fast_commits(conn: Connection[DictRow]) -> None:
    """Let a record's commit return before the server flushes its WAL (the <= 5 ms goal).

    A server crash may lose the last records, never corrupt them; a turn no longer waits for a disk flush.
    """
    conn.execute("SET synchronous_commit = off")


def _storable(value: Any) -> Any:
    """Return text both databases accept: lone surrogates replaced, NUL characters (refused by Postgres) dropped."""
    if not isinstance(value, str):
        return value
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    """Turn a stored row back into a record: sources as a list, flagged as a bool."""
    return {**row, "sources": json.loads(row["sources"] or "[]"), "flagged": bool(row["flagged"])}
