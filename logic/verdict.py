"""The answer call's structured reply: whether the sources answer the question, and the answer, read as it streams."""

from __future__ import annotations

from typing import Any

from langchain_core.utils.json import parse_partial_json

# Sent as the answer call's `response_format`: the verdict comes first, so a "no" arrives before any answer text.
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "grounded_answer",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "answerable": {"type": "boolean",
                               "description": "true only if the sources state the answer to the question"},
                "answer": {"type": "string", "description": "the answer with [n] citations; empty if not answerable"},
            },
            "required": ["answerable", "answer"],
            "additionalProperties": False,
        },
    },
}


class VerdictReader:
    """Turn streamed reply text into answer-text deltas; a model that ignores the schema is read as plain text."""

    def __init__(self) -> None:
        self.raw = ""
        self.json: bool | None = None  # unknown until the first non-space character
        self.answer = ""
        self.answerable: bool | None = None

    def feed(self, piece: str) -> str:
        """Add a piece of the reply; return the answer text it adds."""
        self.raw += piece
        if self.json is None and self.raw.strip():
            self.json = self.raw.lstrip().startswith("{")
        if not self.json:
            return piece if self.json is False else ""
        try:
            parsed = parse_partial_json(self.raw)
        except ValueError:
            return ""
        if not isinstance(parsed, dict):
            return ""
        if isinstance(parsed.get("answerable"), bool):
            self.answerable = parsed["answerable"]
        text = parsed.get("answer")
        # A half-received escape can shorten the partial string; wait until it extends what was read.
        if not isinstance(text, str) or not text.startswith(self.answer):
            return ""
        delta, self.answer = text[len(self.answer):], text
        return delta
