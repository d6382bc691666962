"""Where conversation memory lives: a checkpointer chosen by URL, and one writer per thread across processes."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from logic.errors import SettingsError, StorageError
from rag_agent.logs import redact_url
from tools import folders
from tools.settings import get_settings

redact = redact_url  # the name callers and tests have used

CHECKPOINTER_ENV = "RAG_AGENT_CHECKPOINTER"
# Postgres support (psycopg, its pool and saver) is imported only for a postgresql:// URL: it costs
# a noticeable share of a cold start that the SQLite default does not need.
_POSTGRES = "rag_agent.pg_checkpointer"


def store_errors() -> tuple[type[Exception], ...]:
    """Failures of the conversation store, which surface outside any node (the caller maps them to STORAGE_ERROR)."""
    postgres = sys.modules.get(_POSTGRES)
    return (sqlite3.Error, *((postgres.PostgresError,) if postgres else ()))


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
        reason = folders.read_only(path.parent)  # "unable to open database file" does not say why
        remedy = "make it writable, or set RAG_AGENT_CHECKPOINTER to another store" if reason else SQLITE_REMEDY
        raise StorageError(f"cannot use the conversation store (checkpoint database {path}): {reason or exc}; "
                           f"{remedy}") from exc
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
    postgres = sys.modules.get("langgraph.checkpoint.postgres")
    return "Postgres checkpoint database" if postgres and isinstance(saver, postgres.PostgresSaver) \
        else type(saver).__name__


def open_checkpointer(data_dir: str | Path, url: str | None = None) -> BaseCheckpointSaver[Any]:
    """Open the checkpointer `url` names (default: $RAG_AGENT_CHECKPOINTER, else data_dir/checkpoints.sqlite).

    Args:
        data_dir: folder of the default SQLite file.
        url: `memory`, a SQLite file path (or `sqlite:///path`), or `postgresql://…`.

    """
    spec = (get_settings().checkpointer if url is None else url).strip()
    if not spec:
        return open_sqlite(Path(data_dir) / "checkpoints.sqlite")
    if spec == "memory":
        return InMemorySaver()
    if spec.startswith(("postgresql://", "postgres://")):
        from rag_agent.pg_checkpointer import open_postgres

        try:
            return open_postgres(spec)
        except SettingsError as exc:
            raise SettingsError(f"{CHECKPOINTER_ENV}: {exc}") from exc
    if spec.startswith("sqlite:///"):
        return open_sqlite(Path(spec.removeprefix("sqlite:///")))
    if "://" in spec:
        raise SettingsError(
            f"{CHECKPOINTER_ENV}: unsupported checkpointer {redact_url(spec)!r}; use 'memory', a SQLite file path "
            "or postgresql://user@host/db"
        )
    return open_sqlite(Path(spec))


# A thread's checkpoints older than its latest one, and the writes that belonged to them. Resume and
# the next turn read only the latest checkpoint (with its pending writes), so the rest is dead weight.
_PRUNE_SQLITE = (
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < "
    "(SELECT MAX(checkpoint_id) FROM checkpoints AS c WHERE c.thread_id = checkpoints.thread_id "
    "AND c.checkpoint_ns = checkpoints.checkpoint_ns)",
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_id NOT IN "
    "(SELECT checkpoint_id FROM checkpoints AS c WHERE c.thread_id = writes.thread_id "
    "AND c.checkpoint_ns = writes.checkpoint_ns)",
)


def prune_superseded(saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
    """Keep only a thread's latest checkpoint, so its storage stays as bounded as its message window.

    Called after a finished turn by the thread's only writer. The in-memory saver is left alone: it
    ends with its process.
    """
    postgres = sys.modules.get(_POSTGRES)
    if postgres is not None and isinstance(saver, postgres.PooledPostgresSaver):
        saver.prune([thread_id], strategy="keep_latest")
    elif isinstance(saver, SqliteSaver):
        with saver.lock, saver.conn:  # one transaction: both deletes or neither
            for statement in _PRUNE_SQLITE:
                saver.conn.execute(statement, (thread_id,))


def cross_process_lock(saver: BaseCheckpointSaver[Any], thread_id: str) -> AbstractContextManager[None]:
    """Hold a Postgres advisory lock on the thread for the block; a no-op for other stores."""
    postgres = sys.modules.get(_POSTGRES)
    if postgres is None or not isinstance(saver, postgres.PooledPostgresSaver):
        return nullcontext()
    return postgres.advisory_lock(saver, thread_id)  # type: ignore[no-any-return]
