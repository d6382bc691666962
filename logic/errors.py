"""Typed failures of the agent's dependencies, each with a stable, user-facing error code."""

from __future__ import annotations


class AgentError(Exception):
    """A failure with a code the user sees and a message that is safe to show."""

    code = "INTERNAL_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(AgentError):
    """The user's message cannot be answered as given."""

    code = "INVALID_INPUT"


class EmbeddingError(AgentError):
    """The embedding model failed or is unavailable."""

    code = "EMBEDDING_UNAVAILABLE"


class RetrievalError(AgentError):
    """The vector store failed or is unavailable."""

    code = "RETRIEVAL_UNAVAILABLE"


class IndexMismatchError(AgentError):
    """The index was built with a different embedder than the one configured."""

    code = "INDEX_MISMATCH"


class IndexMissingError(AgentError):
    """No documents have been ingested into the collection yet."""

    code = "INDEX_MISSING"


class LLMError(AgentError):
    """The chat model failed or is unavailable."""

    code = "LLM_UNAVAILABLE"


class LLMRateLimitedError(LLMError):
    """The chat service kept refusing with 429 after the retries."""

    code = "LLM_RATE_LIMITED"


class LLMBadOutputError(LLMError):
    """The chat model replied with something that cannot be shown (empty, or leaking the prompt)."""

    code = "LLM_BAD_OUTPUT"


class StorageError(AgentError):
    """Local storage (index folder or checkpoint database) cannot be used."""

    code = "STORAGE_ERROR"


class TurnTimeoutError(AgentError):
    """The turn used up its time budget (`turn_timeout`) before it could answer."""

    code = "TURN_TIMEOUT"


class SettingsError(ValueError):
    """A setting (per run or of the deployment) is missing, unknown or outside its allowed range."""


# Outages are worth retrying; other errors already say what to do in their message.
RETRYABLE = frozenset({"EMBEDDING_UNAVAILABLE", "RETRIEVAL_UNAVAILABLE", "LLM_UNAVAILABLE", "LLM_RATE_LIMITED",
                       "TURN_TIMEOUT"})


def error_reply(code: str, message: str) -> str:
    """Render a failure as the one reply users see, wherever it happened (a node, the caller, the CLI)."""
    advice = " Please try again in a moment." if code in RETRYABLE else ""
    return f"Sorry, I couldn't answer that: {message}.{advice} (error code: {code})"
