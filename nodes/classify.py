"""classify: validate the message, decide the intent, and make a follow-up a standalone query."""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from graph.budget import call_timeout
from graph.context import Context, resolve_context
from graph.state import State, turn_defaults
from logic.errors import InvalidInputError
from logic.heuristics import CHITCHAT_REPLY, chitchat_reply, rewrite_followup
from logic.history import HISTORY_NOTE, recent_history, window_removals
from logic.not_found import compose
from logic.types import NotFound
from logic.validation import UNREADABLE, clean_question, clean_selection
from nodes.prompts import REWRITE_SYSTEM
from tools.chat import CHAT_BACKOFF, CHAT_RETRIES, chat_available, get_chat_model, load_client

log = logging.getLogger(__name__)

RESET_COMMANDS = {"/reset", "/clear", "/new"}
RESET_REPLY = "Conversation cleared. What would you like to know?"


class Rewrite(BaseModel):
    """What the model must return."""

    intent: Literal["question", "chitchat", "out_of_scope"]
    standalone_query: str = Field(min_length=1, max_length=2000)


def _history_text(recent: list[BaseMessage]) -> str:
    """Render the (already trimmed) recent conversation as plain lines, oldest first."""
    role = {"human": "user", "ai": "assistant"}
    return "\n".join(f"{role.get(m.type, m.type)}: {m.content}" for m in recent)


def llm_rewrite(recent: list[BaseMessage], message: str, ctx: Context) -> Rewrite | None:
    """Ask the chat model for the intent and standalone query; None when its reply is unusable.

    Args:
        recent: the conversation so far, already trimmed to the token budget (logic.history.recent_history).
        message: the latest user message.
        ctx: the run's settings.

    """
    prompt = [SystemMessage(REWRITE_SYSTEM),
              HumanMessage(f"Conversation:\n{_history_text(recent)}\n\nLatest message: {message}")]
    try:
        # At most half of what is left of the turn: the answer still needs time after a slow rewrite.
        load_client()
        timeout = call_timeout(ctx, 2 * (CHAT_RETRIES + 1), CHAT_BACKOFF)
        model = get_chat_model(ctx.chat_model, temperature=0.0, max_tokens=200, timeout=timeout)
        # The rewrite is internal: its tokens must never reach a `messages` stream.
        result = model.with_structured_output(Rewrite, method="json_schema").invoke(
            prompt, config={"tags": ["nostream"]}
        )
    except Exception as exc:  # malformed JSON, a schema violation, an outage, no time left: fall back
        log.warning("LLM rewrite unusable, using the offline heuristic: %r", exc)
        return None
    return result if isinstance(result, Rewrite) else None


def _latest_user_message(messages: list[AnyMessage]) -> HumanMessage | None:
    """Return the message this turn answers: the last one, if the user sent it."""
    last = messages[-1] if messages else None
    return last if isinstance(last, HumanMessage) else None


def _client_roles(messages: list[AnyMessage]) -> list[AnyMessage]:
    """Return messages a client slipped in with a role only the agent uses: any non-chat role, a trailing reply."""
    forged: list[AnyMessage] = [m for m in messages if not isinstance(m, HumanMessage | AIMessage)]
    if messages and isinstance(messages[-1], AIMessage):
        forged.append(messages[-1])
    return forged


def _remove(removals: list[RemoveMessage], messages: list[AnyMessage]) -> list[RemoveMessage]:
    """Add removals for `messages` to the window's, once per id (removing an id twice is an error)."""
    ids = {r.id for r in removals}
    return removals + [RemoveMessage(id=m.id) for m in messages if m.id is not None and m.id not in ids]


def _turns(state: State, message: HumanMessage | None) -> int:
    """Count this turn; threads from before the counter existed count their user messages."""
    previous = state.get("turns")
    if previous is None:
        messages = state.get("messages", [])
        previous = sum(isinstance(m, HumanMessage) for m in messages) - (message is not None)
    return previous + (message is not None)


def out_of_scope(query: str, state: State, removals: list[RemoveMessage]) -> dict[str, Any]:
    """Decline a request the chat model judged no documentation could answer, without retrieving."""
    found: NotFound = {"reason": "out_of_scope_intent", "best_score": None, "threshold": None, "nearest": []}
    answer = compose(query.rstrip("?.! "), found, state.get("filters") or {}, bool(state.get("context")))
    return {"intent": "out_of_scope", "status": "not_found", "retrieval_query": query, "answer": answer,
            "not_found": found, "messages": [*removals, AIMessage(answer)]}


def classify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Reset the turn's fields, trim the window, then record the intent and the query to retrieve with."""
    ctx = resolve_context(runtime.context)
    messages = state.get("messages", [])
    message = _latest_user_message(messages)
    # Removing old messages from state (not just from prompts) keeps every checkpoint the same size.
    removals = window_removals(messages, ctx.max_history)
    update: dict[str, Any] = {**turn_defaults(), "turns": _turns(state, message), "messages": removals}
    forged = _client_roles(messages)
    try:
        if forged:
            # Kept, they would reach the next rewrite prompt as if the agent had said them.
            update["messages"] = _remove(removals, forged)
            raise InvalidInputError("only user messages can be sent; system and assistant roles belong to the agent")
        if message is None:
            raise InvalidInputError("the last message must come from the user")
        if message.additional_kwargs.get(UNREADABLE):  # the messages channel could not store it as sent
            raise InvalidInputError(str(message.additional_kwargs[UNREADABLE]))
        text = clean_question(message.content, ctx.max_question_chars)
        selection = clean_selection(state.get("context") or "")
        if selection and state.get("filters"):
            raise InvalidInputError("filters restrict the documentation search and cannot be combined with a "
                                    "selection (context), which is searched instead; drop one of them")
    except InvalidInputError as exc:
        return {**update, "intent": "invalid", "error": {"code": exc.code, "message": exc.message, "node": "classify"}}

    if text.lower() in RESET_COMMANDS:
        return {
            **update,
            "intent": "reset",
            "status": "reset",
            "answer": RESET_REPLY,
            "last_query": "",
            "history_noted": False,
            "turns": 0,
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage(RESET_REPLY)],
        }
    update["context"] = selection  # cleaned: invisible characters never reach the embedder or the prompt
    reply = chitchat_reply(text)
    if reply is not None:
        return {**update, "intent": "chitchat", "status": "chitchat", "answer": reply,
                "messages": [*removals, AIMessage(reply)]}

    previous = state.get("last_query", "")
    history = messages[:-1]
    if chat_available() and previous and history:
        # Only this rewrite sends the conversation to a model (answers see the standalone query and the
        # sources), so it is where older turns can be left out, and where the user is told so, once.
        recent, trimmed = recent_history(history, ctx.history_tokens)
        if trimmed:
            first = not state.get("history_noted")
            update |= {"history_trimmed": True, "history_noted": True, "history_note": HISTORY_NOTE if first else ""}
        rewrite = llm_rewrite(recent, text, ctx)
        if rewrite is not None and rewrite.intent == "chitchat":
            return {**update, "intent": "chitchat", "status": "chitchat", "answer": CHITCHAT_REPLY,
                    "messages": [*removals, AIMessage(CHITCHAT_REPLY)]}
        if rewrite is not None and rewrite.intent == "out_of_scope":
            return {**update, **out_of_scope(rewrite.standalone_query.strip(), state, removals)}
        if rewrite is not None:
            query = rewrite.standalone_query.strip()
            return {**update, "intent": "question", "retrieval_query": query, "last_query": query}
    query = rewrite_followup(text, previous)
    # The topic stays anchored on the last standalone question: re-rewriting a rewrite would
    # compound any mistake ("it" → a garbled phrase → a worse one) turn after turn.
    return {**update, "intent": "question", "retrieval_query": query,
            "last_query": previous if query != text else query}
