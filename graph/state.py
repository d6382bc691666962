"""Graph state: what a turn reads, what it returns, and what nodes pass between them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage

# Not typing.TypedDict: on Python 3.11 pydantic cannot build a JSON schema from it, and the LangGraph
# server then gives Studio no input or output schema for the graph.
from typing_extensions import TypedDict

from graph.messages import accept_messages
from logic.types import Chunk, Citation, NotFound

Intent = Literal["question", "chitchat", "reset", "invalid", "out_of_scope"]
Status = Literal["grounded", "not_found", "chitchat", "reset", "error"]


class ErrorInfo(TypedDict):
    """A failure recorded by a node, turned into a reply by `error_handler`."""

    code: str
    message: str
    node: str


class Grounding(TypedDict):
    """How well the answer's sentences are supported by the chunks it cites."""

    is_fully_grounded: bool
    # Answer sentences no cited chunk supports; they are flagged in the answer, never silently kept.
    unsupported_claims: list[str]
    # Share of answer sentences that are supported, in [0, 1].
    support: float
    # "lexical" offline, "llm_judge" when a chat model is configured.
    method: str


class InputState(TypedDict):
    """What a caller sends: the conversation, with the new user message last."""

    # add_messages, except that a message it cannot read (non-text content) or an oversized one is stored as an
    # empty stand-in that classify refuses (INVALID_INPUT) and error_handler removes.
    messages: Annotated[list[AnyMessage], accept_messages]
    # A text selection to answer from instead of the index (user-provided context mode); "" for none.
    context: NotRequired[str]
    # Metadata restrictions on retrieval, e.g. {"module": "module-3"}; {} for none.
    filters: NotRequired[dict[str, str]]


class OutputState(InputState, total=False):
    """What a turn returns besides the messages."""

    status: Status
    answer: str
    retrieval_query: str
    retrieved: list[Chunk]
    citations: list[Citation]
    # Best retrieval similarity (cosine of the best chunk).
    top_score: float | None
    # The answerability decision's score in [0, 1]; the threshold is compared against it.
    gate_score: float | None
    threshold: float | None
    # Low confidence: the answer is shown but marked, with the reason (for a UI and the logs).
    flagged: bool
    flag_reason: str
    grounded: bool
    model_used: str
    embedding_model: str
    tokens_used: int
    error: ErrorInfo | None
    grounding: Grounding | None
    # How likely the answer is right, in [0, 1]; None when nothing was answered.
    confidence: float | None
    not_found: NotFound | None
    # Whether this turn reused the retrieval of an identical earlier query on the thread.
    retrieval_cached: bool
    # User turns on the thread since it began or was reset; unlike `messages` it is not windowed.
    turns: int
    # This turn's model prompt left out older turns of the conversation to stay within `history_tokens`.
    history_trimmed: bool
    # A note telling the user so, set only the first time it happens on a thread ("" otherwise).
    history_note: str
    # This turn's id (the key of its record and of feedback on it) and when it ended (ISO-8601 UTC).
    turn_id: str
    timestamp: str


class State(OutputState, total=False):
    """Everything a node may read; per-turn fields are reset by `classify`."""

    intent: Intent
    # The standalone query of the previous question turn: the one field besides `messages`
    # that survives a turn, so a follow-up's "it" can be resolved. `/reset` clears it.
    last_query: str
    # The user has been told that older turns no longer reach the model (told once per thread).
    history_noted: bool
    # When this turn started (UNIX seconds), for its record's latency.
    started_at: float


def turn_defaults() -> dict[str, Any]:
    """Return the per-turn fields with their empty values (messages excluded)."""
    return {
        "status": "error",
        "answer": "",
        "retrieval_query": "",
        "retrieved": [],
        "citations": [],
        "top_score": None,
        "gate_score": None,
        "threshold": None,
        "flagged": False,
        "flag_reason": "",
        "grounded": False,
        "model_used": "",
        "embedding_model": "",
        "tokens_used": 0,
        "error": None,
        "grounding": None,
        "confidence": None,
        "not_found": None,
        "history_trimmed": False,
        "history_note": "",
        "retrieval_cached": False,
        "turn_id": "",
        "timestamp": "",
    }
