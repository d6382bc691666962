"""Conversation memory in Postgres: a pooled saver and per-thread advisory locks (loaded for postgresql:// only)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection
from psycopg import Error as PostgresError
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from graph.context import SettingsError
from logic.errors import StorageError
from rag_agent.logs import redact_url

__all__ = ["PooledPostgresSaver", "PostgresError", "advisory_key", "advisory_lock", "open_postgres"]

# A turn waiting this long for another process's turn on the same thread gives up with a clear error.
LOCK_TIMEOUT = "120s"
_CONNECTION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


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
        raise SettingsError(f"invalid Postgres URL {redact_url(url)}: {exc}") from exc
    try:
        # A direct connection first: the pool would only report a timeout, this names the cause.
        with Connection.connect(url, connect_timeout=10, autocommit=True, prepare_threshold=0,
                                row_factory=dict_row) as conn:
            PostgresSaver(conn).setup()
    except PostgresError as exc:
        raise StorageError(f"cannot use the checkpoint database {redact_url(url)}: {exc}") from exc
    pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        url, min_size=1, max_size=2, kwargs=_CONNECTION, open=True, check=ConnectionPool.check_connection
    )
    lock_pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        url, min_size=0, max_size=8, kwargs=_CONNECTION, open=True, check=ConnectionPool.check_connection
    )
    # check_connection: a pooled connection broken by a server restart is replaced, not handed out.
    return PooledPostgresSaver(pool, lock_pool)


def advisory_key(thread_id: str) -> int:
    """Return a stable signed 64-bit lock key for the thread (Python's hash() varies per process)."""
    digest = hashlib.blake2b(f"rag-agent:thread:{thread_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextmanager
def advisory_lock(saver: PooledPostgresSaver, thread_id: str) -> Iterator[None]:
    """Hold a Postgres advisory lock on the thread for the block, across processes."""
    with saver.lock_pool.connection() as conn, conn.transaction():
        # Transaction-scoped: the lock ends with the transaction, even if this process dies mid-turn.
        conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(thread_id),))
        except PostgresError as exc:
            raise StorageError(f"another turn on thread {thread_id} is still running; try again later") from exc
        yield
