"""One turn from Python or the CLI: thread checks, checkpointer, invocation, and the JSON response."""

from __future__ import annotations

import logging
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Durability
from pydantic import ValidationError

from graph.budget import DEADLINE_KEY, new_deadline
from graph.builder import compile_graph
from graph.context import Context
from graph.recording import RECORDS_KEY, TURN_ID_KEY, iso
from logic.answer_stream import StreamedAnswer
from logic.errors import AgentError, InvalidInputError, StorageError
from logic.heuristics import RESET_REPLY
from rag_agent import records, threads, warmup
from rag_agent.checkpointers import SQLITE_REMEDY, location, open_checkpointer, prune_superseded, store_errors
from rag_agent.logs import install_redaction
from rag_agent.response import failure, response
from rag_agent.threads import check_thread_id
from tools.settings import get_settings

__all__ = ["Agent", "check_thread_id", "open_checkpointer", "response"]

log = logging.getLogger("rag_agent.turn")
# "sync": every finished node is checkpointed before the next starts, so a turn killed midway (even
# by kill -9) resumes from the last finished node instead of redoing the whole turn. benchmarks/
# warm_turn.py measures what "async" would save per turn; it loses that guarantee for a hard kill.
DURABILITY: Durability = "sync"


class Agent:
    """The compiled graph with its memory, ready to answer turns."""

    def __init__(
        self,
        context: Context | None = None,
        checkpointer: BaseCheckpointSaver[Any] | str | None = None,
    ) -> None:
        """Use `checkpointer`, or open the one a URL names (default: $RAG_AGENT_CHECKPOINTER, else SQLite).

        Args:
            context: the run's settings.
            checkpointer: a saver, or `memory`, a SQLite path or a `postgresql://` URL.

        """
        install_redaction()
        get_settings()  # a bad deployment setting (e.g. RAG_AGENT_SESSION_TTL) is refused now, not mid-turn
        self.context = context or Context()
        self._owns_checkpointer = not isinstance(checkpointer, BaseCheckpointSaver)
        self.checkpointer = (
            checkpointer if isinstance(checkpointer, BaseCheckpointSaver)
            else open_checkpointer(get_settings().data_dir, checkpointer)
        )
        self.graph = compile_graph(self.checkpointer)
        self._loaded = False
        self._records_key, self.records = records.store_for(self.checkpointer, get_settings().data_dir)

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

    def _turn(self, thread_id: str, work: Callable[[RunnableConfig], dict[str, Any]],
              relay: StreamedAnswer | None = None, question: Any = None) -> dict[str, Any]:
        """Run `work` as the thread's only writer and shape its state, or its failure, as a response."""
        start, started_at, turn_id = time.perf_counter(), time.time(), uuid.uuid4().hex
        try:
            check_thread_id(thread_id)
            with threads.exclusive(self.checkpointer, thread_id):
                # The deadline belongs to this invocation, not to the thread (a resumed turn gets a new
                # one), and starts once the thread is ours: waiting for another turn does not use it up.
                # The turn id doubles as the LangSmith run id, so feedback can be attached to the trace.
                config: RunnableConfig = {"run_id": uuid.UUID(turn_id), "configurable": {
                    "thread_id": thread_id, DEADLINE_KEY: new_deadline(self.context),
                    TURN_ID_KEY: turn_id, RECORDS_KEY: self._records_key}}
                state = work(config)
                prune_superseded(self.checkpointer, thread_id)
        except AgentError as exc:
            state = records.record_failure(self.records, failure(exc), thread_id, question, (turn_id, started_at),
                                           self.context)
        except store_errors() as exc:
            # Checkpointer failures happen outside any node, so no node can route them.
            failed = failure(StorageError(f"the conversation store ({location(self.checkpointer)}) failed: {exc}; "
                                          f"{SQLITE_REMEDY}"))
            state = records.record_failure(self.records, failed, thread_id, question, (turn_id, started_at),
                                           self.context)
        if relay is not None:  # whatever the nodes did not stream (a reply, an error, a note) comes last
            relay.settle(state.get("answer", ""))
        # Turns the graph did not finish (reset, a resume with nothing to do) still get an id and a time.
        state = {"turn_id": turn_id, "timestamp": iso(time.time()), **state}
        result = response(state, thread_id, time.perf_counter() - start)
        shown, code = thread_id if threads.THREAD_ID.match(thread_id) else "-", (result["error"] or {}).get("code", "-")
        log.info("turn thread=%s status=%s error=%s ms=%d tokens=%d", shown, result["status"], code,
                 result["execution_time_seconds"] * 1000, result["tokens_used"])
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
            # Only what this call was given: `context` and `filters` apply to this turn alone (the graph's
            # channels for them are ephemeral), and classify validates the whole turn.
            try:
                turn: dict[str, Any] = {"messages": [HumanMessage(content=question)]}
            except ValidationError:  # not even a message; what makes a question valid is classify's to say
                raise InvalidInputError("the question must be plain text") from None
            if context is not None:
                turn["context"] = context
            if filters:
                turn["filters"] = filters
            return self._run(turn, config, relay)

        return self._turn(thread_id, work, relay, question)

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
        return threads.prune_idle(self.checkpointer, idle)
