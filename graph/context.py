"""Per-run settings of a turn: the form Studio shows, validated with errors that name the field.

Defaults come from the environment in one place (`RAG_AGENT_<FIELD>`, see `_default`). What belongs to
the deployment (paths, services, keys, memory) lives in tools.settings and is refused here by name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from logic.errors import SettingsError
from nodes.prompts import GROUNDED_SYSTEM, REWRITE_SYSTEM
from tools.chat import chat_available
from tools.settings import ENV_NAMES, Settings, get_settings

__all__ = ["Context", "SettingsError", "resolve_context"]

AnswerMode = Literal["auto", "llm", "extractive"]
ANSWER_MODES = ("auto", "llm", "extractive")
# strict removes unsupported answer sentences (the default); flag keeps them with a note.
GroundingMode = Literal["strict", "flag"]
GROUNDING_MODES = ("strict", "flag")
# (low, high) inclusive; None in threshold means "use the value calibrated for the index".
_RANGES: dict[str, tuple[float, float]] = {
    "top_k": (1, 20),
    "score_threshold": (0.0, 1.0),
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 4096),
    "max_history": (2, 100),
    "max_question_chars": (1, 10_000),
    "request_timeout": (0.1, 600.0),
    "turn_timeout": (1.0, 600.0),
    "history_tokens": (50, 8000),
}
_INTEGRAL = {"top_k", "max_tokens", "max_history", "max_question_chars", "history_tokens"}
# Deployment settings a run may not choose, with the variable an operator sets instead.
DEPLOYMENT = dict(zip(Settings.model_fields, ENV_NAMES, strict=True))


def _default(name: str, fallback: Any) -> Any:
    """Return $RAG_AGENT_<NAME> converted to the field's type, else `fallback`: the one place env defaults are read."""
    variable = f"RAG_AGENT_{name.upper()}"
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return fallback
    if isinstance(fallback, str):
        return raw
    try:
        return int(raw) if name in _INTEGRAL else float(raw)
    except ValueError:
        raise SettingsError(f"{variable} must be a number, got {raw!r}") from None


def _knob(name: str, fallback: Any, description: str) -> Any:
    """Declare a per-run field whose default may come from the environment."""
    def shown_default(schema: dict[str, Any]) -> None:
        """Give Studio's form the default this server would use (read when the schema is built)."""
        schema["default"] = _default(name, fallback)

    # pydantic turns a dataclass field's metadata into its schema: the description and the default shown.
    return field(default_factory=lambda: _default(name, fallback),
                 metadata={"description": description, "json_schema_extra": shown_default})


@dataclass(kw_only=True)
class Context:
    """Per-run settings; anything that belongs to the deployment is refused by name."""

    chat_model: str = _knob("chat_model", "openai/gpt-4o-mini", "Chat model as provider/name.")
    answer_mode: AnswerMode = _knob(
        "answer_mode", "auto",
        "extractive: quote the sources, never call a model; llm: the chat model writes answers (the deployment "
        "must have one); auto: llm when the deployment has a chat model (OPENAI_API_KEY), else extractive.")
    grounding_mode: GroundingMode = _knob(
        "grounding_mode", "strict",
        "strict: remove answer sentences the sources do not support; flag: keep them with a 'Not confirmed' note.")
    embedding_model: str = _knob("embedding_model", "", "Embedder as provider/name; empty picks Cohere with a key, "
                                                        "else local. Must match the index.")
    collection: str = field(default_factory=lambda: get_settings().collection,
                            metadata={"description": "Collection to search: one the deployment serves "
                                                     "(RAG_AGENT_COLLECTIONS).",
                                      "json_schema_extra": lambda s: s.update(default=get_settings().collection)})
    top_k: int = _knob("top_k", 5, "Chunks to retrieve (1-20).")
    score_threshold: float | None = _knob(
        "score_threshold", None, "Minimum gate score to answer (0-1); empty uses the index's calibrated value.")
    temperature: float = _knob("temperature", 0.0, "Chat temperature (0-2).")
    max_tokens: int = _knob("max_tokens", 512, "Answer token limit (1-4096).")
    max_history: int = _knob("max_history", 20, "Messages kept in the thread (2-100); older ones are removed.")
    history_tokens: int = _knob("history_tokens", 800,
                                "Tokens of recent conversation a model prompt may include (50-8000).")
    max_question_chars: int = _knob("max_question_chars", 1000, "Longest question accepted (1-10000).")
    request_timeout: float = _knob("request_timeout", 30.0, "Seconds per model call (0.1-600).")
    # A hung service ends the turn after about this long; a slow local model (Ollama on a CPU) may need more.
    turn_timeout: float = _knob("turn_timeout", 60.0,
                                "Seconds a whole turn may take (1-600); each call gets what is left of it.")
    system_prompt: str = _knob("system_prompt", GROUNDED_SYSTEM,
                               "System prompt of grounded answers; the sources and question follow it.")
    rewrite_prompt: str = _knob("rewrite_prompt", REWRITE_SYSTEM,
                                "System prompt that turns a follow-up into a standalone query and an intent.")

    def __new__(cls, **values: Any) -> Context:
        """Refuse deployment settings and unknown names before anything else (langgraph builds Context(**dict))."""
        known = {f.name for f in fields(cls)}
        deployment = sorted((set(values) & set(DEPLOYMENT)) - known)  # `collection` is both: a run picks one
        if deployment:
            raise SettingsError(f"{', '.join(deployment)} cannot be set per run: it belongs to the deployment "
                                f"({', '.join(DEPLOYMENT[n] for n in deployment)}, see `rag-agent config`)")
        unknown = sorted(set(values) - known)
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        """Reject values outside their documented ranges, and collections the deployment does not serve."""
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int if name in _INTEGRAL else int | float):
                raise SettingsError(f"{name} must be a number between {low:g} and {high:g}, got {value!r}")
            if not low <= value <= high:
                raise SettingsError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
        if self.grounding_mode not in GROUNDING_MODES:
            allowed = ", ".join(GROUNDING_MODES)
            raise SettingsError(f"grounding_mode must be one of {allowed}, got {self.grounding_mode!r}")
        for name in ("collection", "chat_model", "system_prompt", "rewrite_prompt"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise SettingsError(f"{name} must not be empty")
        self._check_deployment(get_settings())

    def _check_deployment(self, settings: Settings) -> None:
        """Check the choices that depend on what the deployment offers."""
        if self.collection not in settings.allowed_collections:
            raise SettingsError(f"collection {self.collection!r} is not served here; "
                                f"choose one of: {', '.join(settings.allowed_collections)}")
        if self.answer_mode not in ANSWER_MODES:
            raise SettingsError(f"answer_mode must be one of {', '.join(ANSWER_MODES)}, got {self.answer_mode!r}")
        if self.answer_mode == "llm" and not settings.openai_api_key.get_secret_value():
            raise SettingsError("answer_mode 'llm' needs a chat model and this deployment has none "
                                "(no OPENAI_API_KEY); use 'auto' or 'extractive'")

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Context:
        """Build a Context from a dict (a server run's `context`), naming any unknown or deployment key."""
        return cls(**{k: v for k, v in values.items() if v is not None or k == "score_threshold"})

    @property
    def uses_model(self) -> bool:
        """Tell whether this run's answers and rewrites come from the chat model."""
        return self.answer_mode != "extractive" and chat_available()


def resolve_context(context: Context | dict[str, Any] | None) -> Context:
    """Return the run's Context; a server run may pass none or a plain dict."""
    if isinstance(context, Context):
        return context
    return Context.from_mapping(dict(context or {}))
