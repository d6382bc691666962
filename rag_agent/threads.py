"""Threads' identity and exclusivity: a safe thread id, and one writer per thread at a time."""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from logic.errors import InvalidInputError
from rag_agent.checkpointers import cross_process_lock
from rag_agent.sessions import list_sessions, session

THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
# A lock lives while some turn holds or waits for it, then drops out: one entry per thread ever seen would grow forever.
_thread_locks: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
_locks_guard = threading.Lock()


def check_thread_id(thread_id: str) -> str:
    """Return the thread id if it is 1-128 safe characters, else raise naming the rule."""
    if not THREAD_ID.match(thread_id) or ".." in thread_id:
        raise InvalidInputError(
            "thread id must be 1-128 characters: letters, digits, '.', '_', ':' or '-', starting with "
            "a letter or digit"
        )
    return thread_id


def thread_lock(thread_id: str) -> threading.Lock:
    """Return the lock that keeps two turns of one thread from forking its history."""
    with _locks_guard:
        lock = _thread_locks.get(thread_id)
        if lock is None:
            lock = _thread_locks[thread_id] = threading.Lock()
        return lock


@contextmanager
def exclusive(checkpointer: BaseCheckpointSaver[Any], thread_id: str) -> Iterator[None]:
    """Be the only writer of the thread: in this process, and across processes with Postgres."""
    # In-process lock first, so threads of this process do not queue on Postgres connections.
    with thread_lock(thread_id), cross_process_lock(checkpointer, thread_id):
        yield


def prune_idle(checkpointer: BaseCheckpointSaver[Any], idle: timedelta) -> list[str]:
    """Delete the checkpoints of every thread idle longer than `idle`; return their ids."""
    deleted = []
    for candidate in list_sessions(checkpointer):
        if candidate.idle() <= idle:
            continue
        with exclusive(checkpointer, candidate.thread_id):
            # Look again under the lock: a turn may have just used the thread.
            current = session(checkpointer, candidate.thread_id)
            if current is not None and current.idle() > idle:
                checkpointer.delete_thread(candidate.thread_id)
                deleted.append(candidate.thread_id)
    return deleted
