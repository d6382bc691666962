"""One turn from Python or the CLI: thread checks, checkpointer, invocation, and the JSON response."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.builder import compile_graph
from graph.context import Context
from tools.errors import AgentError, InvalidInputError, StorageError

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
_thread_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def check_thread_id(thread_id: str) -> str:
    """Return the thread id if it is 1-128 safe characters, else raise naming the rule."""
    if not _THREAD_ID.match(thread_id) or ".." in thread_id:
        raise InvalidInputError(
            "thread id must be 1-128 characters: letters, digits, '.', '_', ':' or '-', starting with "
            "a letter or digit"
        )
    return thread_id


def open_checkpointer(data_dir: str | Path) -> SqliteSaver:
    """Open the SQLite checkpoint file in the data directory, naming the path on failure."""
    path = Path(data_dir) / "checkpoints.sqlite"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=10)
        # SqliteSaver sets WAL but no busy timeout; a concurrent writer would fail at once.
        conn.execute("PRAGMA busy_timeout = 10000")
        saver = SqliteSaver(conn)
        saver.setup()
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot use the checkpoint database {path}: {exc}") from exc
    return saver


def _thread_lock(thread_id: str) -> threading.Lock:
    """Return the lock that keeps two turns of one thread from forking its history."""
    with _locks_guard:
        return _thread_locks.setdefault(thread_id, threading.Lock())


class Agent:
    """The compiled graph with its memory, ready to answer turns."""

    def __init__(self, context: Context | None = None, checkpointer: Any = None) -> None:
        self.context = context or Context()
        self.checkpointer = checkpointer or open_checkpointer(self.context.data_dir)
        self.graph = compile_graph(self.checkpointer)

    def ask(self, question: Any, thread_id: str | None = None) -> dict[str, Any]:
        """Run one turn and return the response object the CLI prints with --json."""
        start = time.perf_counter()
        thread_id = thread_id or uuid.uuid4().hex
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        try:
            check_thread_id(thread_id)
            if not isinstance(question, str):
                raise InvalidInputError("the question must be plain text")
            with _thread_lock(thread_id):
                state = self.graph.invoke(
                    {"messages": [HumanMessage(content=question)]}, config, context=self.context
                )
        except AgentError as exc:
            state = _failure(exc)
        except sqlite3.Error as exc:
            # Checkpointer failures happen outside any node, so no node can route them.
            state = _failure(StorageError(f"the conversation store failed: {exc}"))
        return response(state, thread_id, time.perf_counter() - start)


def _failure(exc: AgentError) -> dict[str, Any]:
    """Describe a failure that happened outside the graph's nodes as a final state."""
    answer = f"Sorry, I couldn't answer that: {exc.message}. (error code: {exc.code})"
    return {"status": "error", "answer": answer, "error": {"code": exc.code, "message": exc.message}}


def response(state: dict[str, Any], thread_id: str, seconds: float) -> dict[str, Any]:
    """Shape a final state as the documented JSON response."""
    error = state.get("error")
    retrieved = state.get("retrieved") or []
    return {
        "thread_id": thread_id,
        "turn": state.get("turns", sum(isinstance(m, HumanMessage) for m in state.get("messages", []))),
        "status": state.get("status", "error"),
        "answer": state.get("answer", ""),
        "grounded": state.get("status") == "grounded",
        "retrieval_query": state.get("retrieval_query", ""),
        "citations": [
            {k: c[k] for k in ("index", "chunk_id", "source", "source_url", "title", "heading_hierarchy", "text")}
            | {"score": round(c["score"], 3)}
            for c in state.get("citations") or []
        ],
        "retrieved": [{"chunk_id": c["chunk_id"], "source": c["source"], "score": round(c["score"], 3)}
                      for c in retrieved],
        "top_score": None if state.get("top_score") is None else round(state["top_score"], 3),
        "threshold": state.get("threshold"),
        "model_used": state.get("model_used", ""),
        "embedding_model": state.get("embedding_model", ""),
        "tokens_used": state.get("tokens_used", 0),
        "execution_time_seconds": round(seconds, 3),
        "error": {"code": error["code"], "message": error["message"]} if error else None,
    }
