"""classify: validate the turn, decide its intent and standalone query, and what the thread forgets; never answer."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from graph.budget import call_timeout
from graph.context import Context, resolve_context
from graph.state import State, turn_defaults
from logic import durations
from logic.errors import InvalidInputError
from logic.heuristics import RESET_COMMANDS, chitchat_reply, rewrite_followup, without_courtesies
from logic.history import recent_history, window_removals
from logic.page_hint import clean_page_url
from logic.validation import UNREADABLE, clean_question, clean_selection
from tools import chat
from tools.chat import CHAT_BACKOFF, CHAT_RETRIES, load_client
from tools.settings import get_settings

log = logging.getLogger(__name__)

class Rewrite(BaseModel):
    """What the model must return."""

    intent: Literal["question", "chitchat", "out_of_scope"]
    standalone_query: str = Field(min_length=1, max_length=2000)


def _history_text(recent: list[BaseMessage]) -> str:
    """Render the (already trimmed) recent conversation as plain lines, oldest first."""
    role = {"human": "user", "ai": "assistant"}
    return "\n".join(f"{role.get(m.type, m.type)}: {m.text}" for m in recent)


def llm_rewrite(recent: list[BaseMessage], message: str, ctx: Context) -> Rewrite | None:
    """Ask the chat model for the intent and standalone query; None when its reply is unusable.

    Args:
        recent: the conversation so far, already trimmed to the token budget (logic.history.recent_history).
        message: the latest user message.
        ctx: the run's settings.

    """
    prompt = [SystemMessage(ctx.rewrite_prompt),
              HumanMessage(f"Conversation:\n{_history_text(recent)}\n\nLatest message: {message}")]
    try:
        # At most half of what is left of the turn: the answer still needs time after a slow rewrite.
        load_client()
        timeout = call_timeout(ctx, 2 * (CHAT_RETRIES + 1), CHAT_BACKOFF)
        model = chat.get_chat_model(ctx.chat_model, temperature=0.0, max_tokens=200, timeout=timeout)
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


def _validate(state: State, ctx: Context, message: HumanMessage | None) -> tuple[str, str, dict[str, str]]:
    """Return the cleaned question, selection and filters, or raise InvalidInputError naming the problem."""
    if message is None:
        raise InvalidInputError("the last message must come from the user")
    if message.additional_kwargs.get(UNREADABLE):  # the messages channel could not store it as sent
        raise InvalidInputError(str(message.additional_kwargs[UNREADABLE]))
    text = clean_question(message.content, ctx.max_question_chars)
    raw = state.get("context")
    if isinstance(raw, str) and raw and not raw.strip():
        raise InvalidInputError("the selection (context) is empty; pass some text or leave it out")
    selection = clean_selection(raw or "")
    wanted = state.get("filters") or {}
    if selection and wanted:
        raise InvalidInputError("filters restrict the documentation search and cannot be combined with a "
                                "selection (context), which is searched instead; drop one of them")
    return text, selection, dict(wanted)


def _expiry(state: State, messages: list[AnyMessage]) -> dict[str, Any]:
    """Start the thread afresh when its last turn is older than the session TTL, keeping only this message."""
    ttl = get_settings().ttl
    last = state.get("active_at")
    if ttl is None or not last or durations.utcnow() - datetime.fromisoformat(last) <= ttl:
        return {}
    log.info("thread idle since %s: expired after %s", last, ttl)
    return {"expired_after": durations.format_idle(ttl), "last_query": "", "history_noted": False, "turns": 1,
            "messages": [RemoveMessage(id=m.id) for m in messages[:-1] if m.id is not None]}


def _intent(state: State, text: str, history: list[AnyMessage], ctx: Context) -> dict[str, Any]:
    """Decide chit-chat, out-of-scope or a question, and the standalone query to retrieve with."""
    if chitchat_reply(text) is not None:
        return {"intent": "chitchat"}
    text = without_courtesies(text)  # "Hi, how do I …?" is searched and judged as "how do I …?"
    previous = state.get("last_query", "")
    update: dict[str, Any] = {}
    if ctx.uses_model and previous and history:
        # Only this rewrite sends the conversation to a model (answers see the standalone query and the
        # sources), so it is where older turns can be left out, and where the user is told so, once.
        recent, trimmed = recent_history(history, ctx.history_tokens)
        if trimmed:
            update = {"history_trimmed": True, "history_noted": True, "history_note": not state.get("history_noted")}
        rewrite = llm_rewrite(recent, text, ctx)
        if rewrite is not None:
            query = rewrite.standalone_query.strip()
            last = query if rewrite.intent == "question" else previous
            return {**update, "intent": rewrite.intent, "retrieval_query": query, "last_query": last}
    query = rewrite_followup(text, previous)
    # The topic stays anchored on the last standalone question: re-rewriting a rewrite would
    # compound any mistake ("it" → a garbled phrase → a worse one) turn after turn.
    return {**update, "intent": "question", "retrieval_query": query,
            "last_query": previous if query != text else query}


def classify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Reset the turn's fields, trim the window, then record the intent and the query to retrieve with."""
    ctx = resolve_context(runtime.context)
    messages = state.get("messages", [])
    message = _latest_user_message(messages)
    now = durations.utcnow().isoformat()
    # Removing old messages from state (not just from prompts) keeps every checkpoint the same size.
    removals = window_removals(messages, ctx.max_history)
    update: dict[str, Any] = {**turn_defaults(), "turns": _turns(state, message), "messages": removals,
                              "page_hint": ""}
    forged = _client_roles(messages)
    try:
        if forged:
            # Kept, they would reach the next rewrite prompt as if the agent had said them.
            update["messages"] = _remove(removals, forged)
            raise InvalidInputError("only user messages can be sent; system and assistant roles belong to the agent")
        text, selection, wanted = _validate(state, ctx, message)
        update["page_hint"] = clean_page_url(state.get("page_url"))
    except InvalidInputError as exc:
        # Not counted: a refused message is taken back out of the thread (error_handler).
        return {**update, "intent": "invalid", "turns": update["turns"] - (message is not None),
                "error": {"code": exc.code, "message": exc.message, "node": "classify"}}
    # Cleaned: invisible characters never reach the embedder or the prompt. Only an answerable message counts
    # as activity: one that is refused neither expires the thread nor keeps it alive.
    update |= {"selection": selection, "applied_filters": wanted, "active_at": now}
    if text.lower() in RESET_COMMANDS:
        return {**update, "intent": "reset", "last_query": "", "history_noted": False, "turns": 0,
                "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}
    expired = _expiry(state, messages)
    history = [] if expired else messages[:-1]
    return {**update, **expired, **_intent({**state, **expired}, text, history, ctx)}  # type: ignore[typeddict-item]
