"""Where conversation memory lives: a checkpointer chosen by URL, and one writer per thread across processes."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg import Connection
from psycopg import Error as PostgresError
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from graph.context import SettingsError
from logic.errors import StorageError

CHECKPOINTER_ENV = "RAG_AGENT_CHECKPOINTER"
# Failures of the conversation store surface outside any node; the caller maps them to STORAGE_ERROR.
STORE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, PostgresError)
# A turn waiting this long for another process's turn on the same thread gives up with a clear error.
LOCK_TIMEOUT = "120s"
_CONNECTION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def redact(url: str) -> str:
    """Return the URL with any password replaced, so errors can name it safely."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def open_sqlite(path: Path) -> SqliteSaver:
    """Open a SQLite checkpoint file (WAL, busy timeout), naming the path on failure."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=10)
        # SqliteSaver sets WAL but no busy timeout; a concurrent writer would fail at once.
        conn.execute("PRAGMA busy_timeout = 10000")
        saver = SqliteSaver(conn)
        saver.setup()
        # setup() turns on WAL; with WAL, NORMAL still survives a killed process (what resume relies
        # on) and only an OS crash can lose the last commits, while FULL fsyncs each of a turn's
        # ~5 checkpoints (measured: most of the graph's overhead, docs/benchmarks.md).
        conn.execute("PRAGMA synchronous = NORMAL")
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot use the conversation store (checkpoint database {path}): {exc}; "
                           f"{SQLITE_REMEDY}") from exc
    return saver


SQLITE_REMEDY = ("if another process holds it, retry; if the file is damaged, move it aside to start "
                 "conversations afresh, or set RAG_AGENT_CHECKPOINTER to another store")


def location(saver: BaseCheckpointSaver[Any]) -> str:
    """Name where a checkpointer keeps conversations, for error messages (never a password)."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        try:
            return f"checkpoint database {conn.execute('PRAGMA database_list').fetchone()[2]}"
        except sqlite3.Error:
            return "SQLite checkpoint database"
    return "Postgres checkpoint database" if isinstance(saver, PostgresSaver) else type(saver).__name__


class PooledPostgresSaver(PostgresSaver):
    """A PostgresSaver over a connection pool, with a separate pool for per-thread advisory locks."""

    def __init__(self, pool: ConnectionPool[Connection[DictRow]], lock_pool: ConnectionPool[Connection[DictRow]]):
        super().__init__(pool)
        # Lock holders keep a connection for a whole turn; a separate pool means they can never
        # starve the saver of the connection it needs to finish that turn.
        self.lock_pool = lock_pool

    def close(self) -> None:
        """Close both pools."""
        self.lock_pool.close()
        if isinstance(self.conn, ConnectionPool):
            self.conn.close()


def open_postgres(url: str) -> PooledPostgresSaver:
    """Connect to Postgres, create the checkpoint tables on first use, and return a pooled saver."""
    try:
        conninfo_to_dict(url)
    except PostgresError as exc:
        raise SettingsError(f"{CHECKPOINTER_ENV}: invalid Postgres URL {redact(url)}: {exc}") from exc
    try:
        # A direct connection first: the pool would only report a timeout, this names the cause.
        with Connection.connect(url, connect_timeout=10, autocommit=True, prepare_threshold=0,
                                row_factory=dict_row) as conn:
            PostgresSaver(conn).setup()
    except PostgresError as exc:
        raise StorageError(f"cannot use the checkpoint database {redact(url)}: {exc}") from exc
    pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        url, min_size=1, max_size=2, kwargs=_CONNECTION, open=True, check=ConnectionPool.check_connection
    )
    lock_pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        url, min_size=0, max_size=8, kwargs=_CONNECTION, open=True, check=ConnectionPool.check_connection
    )
    # check_connection: a pooled connection broken by a server restart is replaced, not handed out.
    return PooledPostgresSaver(pool, lock_pool)


def open_checkpointer(data_dir: str | Path, url: str | None = None) -> BaseCheckpointSaver[Any]:
    """Open the checkpointer `url` names (default: $RAG_AGENT_CHECKPOINTER, else data_dir/checkpoints.sqlite).

    Args:
        data_dir: folder of the default SQLite file.
        url: `memory`, a SQLite file path (or `sqlite:///path`), or `postgresql://…`.

    """
    spec = (os.environ.get(CHECKPOINTER_ENV, "") if url is None else url).strip()
    if not spec:
        return open_sqlite(Path(data_dir) / "checkpoints.sqlite")
    if spec == "memory":
        return InMemorySaver()
    if spec.startswith(("postgresql://", "postgres://")):
        return open_postgres(spec)
    if spec.startswith("sqlite:///"):
        return open_sqlite(Path(spec.removeprefix("sqlite:///")))
    if "://" in spec:
        raise SettingsError(
            f"{CHECKPOINTER_ENV}: unsupported checkpointer {redact(spec)!r}; use 'memory', a SQLite file path "
            "or postgresql://user@host/db"
        )
    return open_sqlite(Path(spec))


def advisory_key(thread_id: str) -> int:
    """Return a stable signed 64-bit lock key for the thread (Python's hash() varies per process)."""
    digest = hashlib.blake2b(f"rag-agent:thread:{thread_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextmanager
def cross_process_lock(saver: BaseCheckpointSaver[Any], thread_id: str) -> Iterator[None]:
    """Hold a Postgres advisory lock on the thread for the block; a no-op for other stores."""
    if not isinstance(saver, PooledPostgresSaver):
        yield
        return
    with saver.lock_pool.connection() as conn, conn.transaction():
        # Transaction-scoped: the lock ends with the transaction, even if this process dies mid-turn.
        conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(thread_id),))
        except PostgresError as exc:
            raise StorageError(f"another turn on thread {thread_id} is still running; try again later") from exc
        yield
