"""Runtime settings of a turn: the form Studio shows, validated with errors that name the field."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any


class SettingsError(ValueError):
    """A runtime setting is outside its allowed range."""


def _env(name: str, default: str) -> str:
    """Read a non-secret default from the environment."""
    return os.environ.get(name) or default


def _env_seconds(name: str, default: float) -> float:
    """Read a duration in seconds from the environment, naming the variable when it is not a number."""
    raw = os.environ.get(name)
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {raw!r}") from None


# strict removes unsupported answer sentences (the default); flag keeps them with a note.
GROUNDING_MODES = ("strict", "flag")
# (low, high) inclusive; None in threshold means "use the value calibrated for the index".
_RANGES: dict[str, tuple[float, float]] = {
    "top_k": (1, 20),
    "score_threshold": (0.0, 1.0),
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 4096),
    "max_history": (2, 100),
    "max_question_chars": (1, 10_000),
    "turn_timeout": (1.0, 600.0),
    "history_tokens": (50, 8000),
}


@dataclass(kw_only=True)
class Context:
    """Per-run settings; secrets stay in environment variables."""

    chat_model: str = field(
        default_factory=lambda: _env("RAG_AGENT_CHAT_MODEL", "openai/gpt-4o-mini"),
        metadata={"description": "Chat model as provider/name; used only when OPENAI_API_KEY is set."},
    )
    embedding_model: str = field(
        default_factory=lambda: _env("RAG_AGENT_EMBEDDING_MODEL", ""),
        metadata={"description": "Embedder as provider/name; empty picks Cohere with a key, else local."},
    )
    collection: str = field(
        default_factory=lambda: _env("RAG_AGENT_COLLECTION", "docs"),
        metadata={"description": "Vector store collection to search."},
    )
    data_dir: str = field(
        default_factory=lambda: _env("RAG_AGENT_DATA_DIR", ".rag-agent"),
        metadata={"description": "Folder holding the local index, manifest and checkpoints."},
    )
    top_k: int = field(default=5, metadata={"description": "Chunks to retrieve (1-20)."})
    score_threshold: float | None = field(
        default=None,
        metadata={"description": "Minimum best score to answer (0-1); empty uses the index's calibrated value."},
    )
    temperature: float = field(default=0.0, metadata={"description": "Chat temperature (0-2)."})
    max_tokens: int = field(default=512, metadata={"description": "Answer token limit (1-4096)."})
    max_history: int = field(
        default=20, metadata={"description": "Messages kept in the thread (2-100); older ones are removed from state."}
    )
    history_tokens: int = field(
        default=800,
        metadata={"description": "Tokens of recent conversation a model prompt may include (50-8000)."},
    )
    max_question_chars: int = field(default=1000, metadata={"description": "Longest question accepted."})
    request_timeout: float = field(default=30.0, metadata={"description": "Seconds per model call."})
    # A hung service ends the turn after about this long; a slow local model (Ollama on a CPU) may need more.
    turn_timeout: float = field(
        default_factory=lambda: _env_seconds("RAG_AGENT_TURN_TIMEOUT", 60.0),
        metadata={"description": "Seconds a whole turn may take (1-600); each call gets what is left of it."},
    )

    grounding_mode: str = field(
        default="strict",
        metadata={"description": "strict: remove answer sentences the sources do not support; "
                                 "flag: keep them with a 'Not confirmed' note."},
    )

    def __post_init__(self) -> None:
        """Reject values outside their documented ranges."""
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if value is None:
                continue
            integral = name in {"top_k", "max_tokens", "max_history", "max_question_chars", "history_tokens"}
            if isinstance(value, bool) or not isinstance(value, int if integral else int | float):
                raise SettingsError(f"{name} must be a number between {low:g} and {high:g}, got {value!r}")
            if not low <= value <= high:
                raise SettingsError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
        if self.grounding_mode not in GROUNDING_MODES:
            allowed = ", ".join(GROUNDING_MODES)
            raise SettingsError(f"grounding_mode must be one of {allowed}, got {self.grounding_mode!r}")
        if self.request_timeout <= 0:
            raise SettingsError(f"request_timeout must be positive, got {self.request_timeout!r}")
        for name in ("collection", "data_dir", "chat_model"):
            if not str(getattr(self, name)).strip():
                raise SettingsError(f"{name} must not be empty")

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Context:
        """Build a Context from a dict, naming any unknown key."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**{k: v for k, v in values.items() if v is not None or k == "score_threshold"})


def resolve_context(context: Context | dict[str, Any] | None) -> Context:
    """Return the run's Context; a server run may pass none or a plain dict."""
    if isinstance(context, Context):
        return context
    return Context.from_mapping(dict(context or {}))
