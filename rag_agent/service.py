"""One turn from Python or the CLI: thread checks, checkpointer, invocation, and the JSON response."""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Durability

from graph.budget import DEADLINE_KEY, new_deadline
from graph.builder import compile_graph
from graph.context import Context
from graph.recording import RECORDS_KEY, TURN_ID_KEY, iso
from logic.answer_stream import StreamedAnswer
from logic.errors import AgentError, InvalidInputError, StorageError
from logic.validation import clean_question
from nodes.classify import RESET_REPLY
from rag_agent import records, warmup
from rag_agent.checkpointers import (
    SQLITE_REMEDY,
    cross_process_lock,
    location,
    open_checkpointer,
    prune_superseded,
    store_errors,
)
from rag_agent.logs import install_redaction
from rag_agent.sessions import format_idle, list_sessions, session
from rag_agent.sessions import session_ttl as ttl_setting

__all__ = ["Agent", "check_thread_id", "open_checkpointer", "response"]

log = logging.getLogger("rag_agent.turn")
_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
_thread_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
EXPIRED_NOTE = "(Our earlier conversation on this thread expired after {ttl} without activity; this starts a new one.)"


# "sync": every finished node is checkpointed before the next starts, so a turn killed midway (even
# by kill -9) resumes from the last finished node instead of redoing the whole turn. benchmarks/
# warm_turn.py measures what "async" would save per turn; it loses that guarantee for a hard kill.
DURABILITY: Durability = "sync"


def check_thread_id(thread_id: str) -> str:
    """Return the thread id if it is 1-128 safe characters, else raise naming the rule."""
    if not _THREAD_ID.match(thread_id) or ".." in thread_id:
        raise InvalidInputError(
            "thread id must be 1-128 characters: letters, digits, '.', '_', ':' or '-', starting with "
            "a letter or digit"
        )
    return thread_id


def _thread_lock(thread_id: str) -> threading.Lock:
    """Return the lock that keeps two turns of one thread from forking its history."""
    with _locks_guard:
        return _thread_locks.setdefault(thread_id, threading.Lock())


class Agent:
    """The compiled graph with its memory, ready to answer turns."""

    def __init__(
        self,
        context: Context | None = None,
        checkpointer: BaseCheckpointSaver[Any] | str | None = None,
        *,
        session_ttl: timedelta | str | None = None,
    ) -> None:
        """Use `checkpointer`, or open the one a URL names (default: $RAG_AGENT_CHECKPOINTER, else SQLite).

        Args:
            context: the run's settings.
            checkpointer: a saver, or `memory`, a SQLite path or a `postgresql://` URL.
            session_ttl: idle time after which a thread starts fresh (default $RAG_AGENT_SESSION_TTL or 24h;
                `off` never expires).

        """
        install_redaction()
        self.context = context or Context()
        self.session_ttl = session_ttl if isinstance(session_ttl, timedelta) else ttl_setting(session_ttl)
        self._owns_checkpointer = not isinstance(checkpointer, BaseCheckpointSaver)
        self.checkpointer = (
            checkpointer if isinstance(checkpointer, BaseCheckpointSaver)
            else open_checkpointer(self.context.data_dir, checkpointer)
        )
        self.graph = compile_graph(self.checkpointer)
        self._loaded = False
        self._records_key, self.records = records.store_for(self.checkpointer, self.context.data_dir)

    def load(self) -> None:
        """Load the embedder and open the index now (the first turn does it otherwise, before its deadline)."""
        if not self._loaded:
            warmup.load(self.context, warmup.announce if sys.stderr.isatty() else None)
            self._loaded = True

    def feedback(self, turn_id: str, rating: int | str, comment: str | None = None) -> dict[str, Any]:
        """Rate a turn by its `turn_id`: +1/"up" or -1/"down", with an optional comment.

        Raises InvalidInputError for a bad rating and UnknownTurnError for an id no record has.
        """
        return records.record_feedback(turn_id, rating, comment, store=self.records)

    def close(self) -> None:
        """Release the connections of a checkpointer this Agent opened, and its records store."""
        records.close_store(self._records_key)
        if self._owns_checkpointer:
            closer = getattr(self.checkpointer, "close", None) or getattr(
                getattr(self.checkpointer, "conn", None), "close", None
            )
            if callable(closer):
                closer()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _exclusive(self, thread_id: str) -> Iterator[None]:
        """Be the only writer of the thread: in this process, and across processes with Postgres."""
        # In-process lock first, so threads of this process do not queue on Postgres connections.
        with _thread_lock(thread_id), cross_process_lock(self.checkpointer, thread_id):
            yield

    def _turn(self, thread_id: str, work: Callable[[RunnableConfig], dict[str, Any]],
              relay: StreamedAnswer | None = None, question: Any = None) -> dict[str, Any]:
        """Run `work` as the thread's only writer and shape its state, or its failure, as a response."""
        start, started_at, turn_id = time.perf_counter(), time.time(), uuid.uuid4().hex
        try:
            check_thread_id(thread_id)
            with self._exclusive(thread_id):
                # The deadline belongs to this invocation, not to the thread (a resumed turn gets a new
                # one), and starts once the thread is ours: waiting for another turn does not use it up.
                # The turn id doubles as the LangSmith run id, so feedback can be attached to the trace.
                config: RunnableConfig = {"run_id": uuid.UUID(turn_id), "configurable": {
                    "thread_id": thread_id, DEADLINE_KEY: new_deadline(self.context),
                    TURN_ID_KEY: turn_id, RECORDS_KEY: self._records_key}}
                state = work(config)
                prune_superseded(self.checkpointer, thread_id)
        except AgentError as exc:
            state = records.record_failure(self.records, _failure(exc), thread_id, question, (turn_id, started_at),
                                           self.context)
        except store_errors() as exc:
            # Checkpointer failures happen outside any node, so no node can route them.
            failure = _failure(StorageError(f"the conversation store ({location(self.checkpointer)}) failed: {exc}; "
                                            f"{SQLITE_REMEDY}"))
            state = records.record_failure(self.records, failure, thread_id, question, (turn_id, started_at),
                                           self.context)
        if relay is not None:  # whatever the nodes did not stream (a reply, an error, a note) comes last
            relay.settle(state.get("answer", ""))
        # Turns the graph did not finish (reset, a resume with nothing to do) still get an id and a time.
        state = {"turn_id": turn_id, "timestamp": iso(time.time()), **state}
        result = response(state, thread_id, time.perf_counter() - start)
        log.info("turn thread=%s status=%s error=%s ms=%d tokens=%d", thread_id if _THREAD_ID.match(thread_id) else "-",
                 result["status"], (result["error"] or {}).get("code", "-"), result["execution_time_seconds"] * 1000,
                 result["tokens_used"])
        return result

    def _run(self, turn_input: dict[str, Any] | None, config: RunnableConfig,
             relay: StreamedAnswer | None) -> dict[str, Any]:
        """Invoke the graph, passing answer events to `relay` as the nodes emit them."""
        if relay is None:
            state: dict[str, Any] = self.graph.invoke(turn_input, config, context=self.context,
                                                      durability=DURABILITY)
            return state
        for mode, chunk in self.graph.stream(turn_input, config, context=self.context, durability=DURABILITY,
                                             stream_mode=["custom", "values"]):
            if mode == "values" and isinstance(chunk, dict):
                state = chunk
            elif isinstance(chunk, dict):
                relay(chunk)
        return state

    def ask(self, question: Any, thread_id: str | None = None, *, context: str | None = None,
            filters: dict[str, str] | None = None,
            on_answer: Callable[[dict[str, str]], None] | None = None) -> dict[str, Any]:
        """Run one turn and return the response object the CLI prints with --json.

        Args:
            question: the user's message.
            thread_id: the conversation to continue (default: a new one).
            context: a text selection to answer from instead of the index.
            filters: metadata restrictions on retrieval, e.g. {"module": "module-3"}.
            on_answer: called with each answer event as it is produced: `{"answer_delta": text}` to
                append, `{"answer_replace": text}` to show instead of everything so far.

        """
        thread_id = thread_id or uuid.uuid4().hex
        relay = StreamedAnswer(on_answer) if on_answer else None
        self.load()  # one-time loading is not the turn's work: it must not count against turn_timeout

        def work(config: RunnableConfig) -> dict[str, Any]:
            # Bad input is refused before the graph runs: no model or embedding call, no checkpoint,
            # and an expired thread is not cleared by a message that cannot be answered.
            clean_question(question, self.context.max_question_chars)
            if context is not None and not (isinstance(context, str) and context.strip()):
                raise InvalidInputError("the selection (context) is empty; pass some text or leave it out")
            note = ""
            if self._expire(thread_id) and self.session_ttl is not None:
                note = EXPIRED_NOTE.format(ttl=format_idle(self.session_ttl)) + "\n\n"
                if relay is not None:
                    relay({"answer_delta": note})
            # `context` and `filters` are state channels that persist on a thread: both are always
            # sent, so each turn uses exactly what this call asked for.
            turn = {"messages": [HumanMessage(content=question)], "context": context or "", "filters": filters or {}}
            state = self._run(turn, config, relay)
            # Notes about the conversation itself go in the reply, never in the stored history.
            trimmed = f"\n\n{state['history_note']}" if state.get("history_note") else ""
            return {**state, "answer": note + state.get("answer", "") + trimmed} if note or trimmed else state

        return self._turn(thread_id, work, relay, question)

    def _expire(self, thread_id: str) -> bool:
        """Delete the thread if it has been idle longer than the session TTL; tell whether it did."""
        if self.session_ttl is None:
            return False
        found = session(self.checkpointer, thread_id)
        if found is None or found.idle() <= self.session_ttl:
            return False
        self.checkpointer.delete_thread(thread_id)
        return True

    def resume(self, thread_id: str) -> dict[str, Any]:
        """Finish a turn that was killed midway, from its last checkpointed node."""
        self.load()

        def work(config: RunnableConfig) -> dict[str, Any]:
            if not self.graph.get_state(config).next:
                raise InvalidInputError(f"thread {thread_id} has no unfinished turn to resume")
            return self._run(None, config, None)

        return self._turn(thread_id, work)

    def reset(self, thread_id: str) -> dict[str, Any]:
        """Forget the thread's conversation, as `/reset` does, deleting its checkpoints."""

        def work(config: RunnableConfig) -> dict[str, Any]:
            self.checkpointer.delete_thread(thread_id)
            return {"status": "reset", "answer": RESET_REPLY, "turns": 0}

        return self._turn(thread_id, work)

    def prune(self, idle: timedelta) -> list[str]:
        """Delete the checkpoints of every thread idle longer than `idle`; return their ids."""
        deleted = []
        for candidate in list_sessions(self.checkpointer):
            if candidate.idle() <= idle:
                continue
            with self._exclusive(candidate.thread_id):
                # Look again under the lock: a turn may have just used the thread.
                current = session(self.checkpointer, candidate.thread_id)
                if current is not None and current.idle() > idle:
                    self.checkpointer.delete_thread(candidate.thread_id)
                    deleted.append(candidate.thread_id)
        return deleted


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
        "turn_id": state.get("turn_id", ""),
        "timestamp": state.get("timestamp", ""),
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
        "retrieved": [{"chunk_id": c["chunk_id"], "source": c["source"], "score": round(c["score"], 3),
                       "relevance": round(c.get("relevance", c["score"]), 3)} for c in retrieved],
        "top_score": None if state.get("top_score") is None else round(state["top_score"], 3),
        "gate_score": None if state.get("gate_score") is None else round(state["gate_score"], 3),
        "threshold": state.get("threshold"),
        "flagged": bool(state.get("flagged")),
        "flag_reason": state.get("flag_reason") or "",
        "grounding": state.get("grounding"),
        "confidence": state.get("confidence"),
        "not_found": state.get("not_found"),
        "retrieval_cached": bool(state.get("retrieval_cached")),
        "model_used": state.get("model_used", ""),
        "embedding_model": state.get("embedding_model", ""),
        "tokens_used": state.get("tokens_used", 0),
        # The extractive path has no provider usage data; its count is a tokenizer estimate.
        "tokens_estimated": str(state.get("model_used", "")).startswith("extractive"),
        "execution_time_seconds": round(seconds, 3),
        "history_trimmed": bool(state.get("history_trimmed")),
        "error": {"code": error["code"], "message": error["message"]} if error else None,
    }
