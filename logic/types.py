"""The retrieved-chunk types every layer shares: a chunk, a citation, and why a question went unanswered."""

from __future__ import annotations

from typing import Literal, NotRequired

# Not typing.TypedDict: on Python 3.11 pydantic cannot build a JSON schema from it, and the LangGraph
# server then gives Studio no input or output schema for the graph.
from typing_extensions import TypedDict

# "unsupported": the generated answer kept no valid citation or no statement its sources support.
NotFoundReason = Literal["no_results", "below_threshold", "filtered_out", "out_of_scope_intent", "unsupported",
                         "not_answerable"]


class Chunk(TypedDict):
    """One retrieved chunk with its relevance score."""

    chunk_id: str
    source: str
    source_url: str
    title: str
    heading_hierarchy: list[str]
    score: float
    text: str
    # The re-ranking score (cosine plus lexical and page evidence) that ordered the chunks.
    relevance: NotRequired[float]
    # Its place on its page (0 first): where the page goes on after it. Absent from a selection's parts.
    chunk_index: NotRequired[int]


class Reading(TypedDict):
    """A passage of a retrieved chunk that the reading model read, and how likely it answers the question."""

    chunk_id: str
    # The passage's units: positions in logic.passages.units of the chunk's text as the answerer quotes it.
    units: list[int]
    # The reading model's probability that the passage answers the question.
    answers: float


class Citation(Chunk):
    """A chunk the answer cites as `[index]`."""

    index: int


class Section(TypedDict):
    """A section of the documentation, with a deep link to it."""

    title: str
    source_url: str
    score: float
    # The indexed document the section belongs to (its module is the first folder).
    source: NotRequired[str]


class NotFound(TypedDict):
    """Why a question was not answered, and where the user might look instead."""

    reason: NotFoundReason
    best_score: float | None
    threshold: float | None
    nearest: list[Section]
