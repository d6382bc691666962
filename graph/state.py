"""Graph state: what a turn reads, what it returns, and what nodes pass between them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue
from pydantic import Field

# Not typing.TypedDict: on Python 3.11 pydantic cannot build a JSON schema from it, and the LangGraph
# server then gives Studio no input or output schema for the graph.
from typing_extensions import TypedDict

from graph.messages import accept_messages
from logic.types import Chunk, Citation, NotFound, Reading

TOP_SCORE = ("Best retrieval similarity: the highest cosine similarity between the query and a retrieved chunk, "
             "in [-1, 1]; null when nothing was retrieved.")
GATE_SCORE = ("The score gate's figure, compared with `threshold` to decide whether to answer: today the best "
              "cosine plus up to 0.25 for query-term coverage, so in [-1, 1.25] (docs/configuration.md, "
              "'The score gate'); null when nothing was retrieved.")

Intent = Literal["question", "chitchat", "reset", "invalid", "out_of_scope"]
# "pending" until the node that writes the answer sets the outcome: a UI streaming updates never sees a
# turn "fail" before it has finished.
Status = Literal["pending", "grounded", "not_found", "chitchat", "reset", "error"]


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
    """What a caller sends: the conversation, with the new user message last, and this turn's options."""

    # add_messages, except that a message it cannot read (non-text content) or an oversized one is stored as an
    # empty stand-in that classify refuses (INVALID_INPUT) and error_handler removes.
    messages: Annotated[list[AnyMessage], accept_messages]
    # Per-turn inputs are ephemeral channels: they hold what this run sent for classify's step only, then
    # empty themselves, so a later turn that sends only `messages` (Studio, the SDK, bare invoke) never
    # inherits them. classify copies the cleaned values into `selection` and `applied_filters`.
    # A text selection to answer from instead of the index (user-provided context mode); "" for none.
    context: NotRequired[Annotated[str, EphemeralValue(str)]]
    # Metadata restrictions on retrieval, e.g. {"module": "module-3"}; {} for none.
    filters: NotRequired[Annotated[dict[str, str], EphemeralValue(dict)]]
    # The URL of the page the question was asked on: a hint that favours that page's sections. Per turn:
    # `classify` moves it into `page_hint`, so a turn that does not send it has none.
    page_url: NotRequired[Annotated[str, EphemeralValue(str)]]


class OutputState(TypedDict, total=False):
    """What a turn returns besides the messages."""

    messages: Required[Annotated[list[AnyMessage], accept_messages]]
    # The selection this turn answered from ("" for the index) and the filters it applied ({} for none).
    selection: str
    applied_filters: dict[str, str]
    status: Status
    answer: str
    retrieval_query: str
    retrieved: list[Chunk]
    citations: list[Citation]
    # The passages of the best sections the reading model read (offline defaults), best first.
    readings: list[Reading]
    # Described in the output schema, so Studio says which score is which.
    top_score: Annotated[float | None, Field(description=TOP_SCORE)]
    gate_score: Annotated[float | None, Field(description=GATE_SCORE)]
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
    # This turn's id (the key of its record and of feedback on it) and when it ended (ISO-8601 UTC).
    turn_id: str
    timestamp: str


class State(InputState, OutputState, total=False):
    """Everything a node may read; per-turn fields are reset by `classify`."""

    intent: Intent
    # The standalone query of the previous question turn, kept so a follow-up's "it" can be resolved.
    # `/reset` and session expiry clear it.
    last_query: str
    # The user has been told that older turns no longer reach the model (told once per thread).
    history_noted: bool
    # This turn's `page_url`, cleaned; "" when the turn sent none.
    page_hint: str
    # When this turn started (UNIX seconds), for its record's latency.
    started_at: float
    # When the thread's previous turn started (ISO 8601, UTC): how classify tells an idle thread has expired.
    active_at: str
    # Notes classify decided the user must read with this turn's answer; the answering node renders them.
    # The session TTL after which this thread expired and started afresh ("" when it did not).
    expired_after: str
    # Tell the user, this once, that older turns no longer reach the model.
    history_note: bool


def turn_defaults() -> dict[str, Any]:
    """Return the per-turn fields with their empty values (messages excluded)."""
    return {
        "status": "pending",
        "selection": "",
        "applied_filters": {},
        "answer": "",
        "retrieval_query": "",
        "retrieved": [],
        "citations": [],
        "readings": [],
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
        "history_note": False,
        "expired_after": "",
        "retrieval_cached": False,
        "turn_id": "",
        "timestamp": "",
    }
