"""What an anonymous visitor may do on the LangGraph API: their own threads and runs, with default settings."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

# Input fields the widget sends; anything else is refused rather than handed to the graph.
VISITOR_INPUT = frozenset({"messages", "context", "page_url", "filters"})
# Run options a visitor may set; settings and config belong to the deployment.
VISITOR_RUN_KEYS = frozenset({"input", "stream_mode", "stream_subgraphs", "stream_resumable", "subgraphs",
                              "resumable", "on_disconnect", "feedback_keys", "temporary", "multitask_strategy",
                              "if_not_exists", "durability", "webhook", "interrupt_before", "interrupt_after",
                              "checkpoint_during", "on_completion", "after_seconds", "checkpoint", "checkpoint_id",
                              "command", "metadata", "config", "context", "assistant_id"})


def is_visitor(identity: str) -> bool:
    """Tell an anonymous visitor's identity from a named user's."""
    return identity.startswith("visitor:")


def _refuse(status: int, detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=status, detail=detail)


def check(resource: str, action: str, value: dict[str, Any]) -> None:
    """Raise 403/400 for what a visitor may not do; their threads are owner-scoped elsewhere."""
    if resource != "threads":
        raise _refuse(403, f"visitors may only use their own conversations, not {resource}")
    if action == "create_run":
        check_run(value.get("kwargs") or {})


def check_run(kwargs: dict[str, Any]) -> None:
    """Refuse run settings, config overrides, commands and unknown input fields from a visitor."""
    unknown = sorted(set(kwargs) - VISITOR_RUN_KEYS)
    if unknown:
        raise _refuse(400, f"visitors cannot set {', '.join(unknown)}")
    if kwargs.get("context"):
        raise _refuse(403, "visitors cannot change the agent's settings (context); the deployment sets them")
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    # The server puts its own ids (thread, run, assistant, user) here; nothing a visitor sends is needed.
    foreign = sorted(k for k in configurable if not k.startswith(("thread_id", "run_id", "assistant_id", "graph_id",
                                                                   "user_id", "langgraph_", "__", "checkpoint")))
    if foreign:
        raise _refuse(403, f"visitors cannot set config.configurable {', '.join(foreign)}")
    if kwargs.get("command"):
        raise _refuse(403, "visitors cannot send commands to the graph")
    payload = kwargs.get("input")
    if payload is None:
        return
    if not isinstance(payload, dict):
        raise _refuse(400, "input must be an object with messages")
    extra = sorted(set(payload) - VISITOR_INPUT)
    if extra:
        raise _refuse(400, f"unknown input field(s) {', '.join(extra)}; send {', '.join(sorted(VISITOR_INPUT))}")
    messages = payload.get("messages") or []
    if not isinstance(messages, list) or len(messages) != 1:
        raise _refuse(400, "send exactly one new message per turn; the conversation is kept on the server")
