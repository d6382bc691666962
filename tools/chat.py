"""Which chat model writes grounded answers: OpenAI (or any compatible server) when a key is set."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from logic.errors import LLMBadOutputError, LLMError, LLMRateLimitedError
from tools.settings import get_settings

EXTRACTIVE = "extractive (offline, no OPENAI_API_KEY)"
# The OpenAI SDK's own retries (429, 5xx, connection errors, timeouts) are the only retry layer.
CHAT_RETRIES = 2
# The most the SDK sleeps between those attempts without a Retry-After header (0.5 s, then 1 s).
CHAT_BACKOFF = 1.5


def chat_available() -> bool:
    """Tell whether the deployment has a chat model (an API key is configured)."""
    return bool(get_settings().openai_api_key.get_secret_value())


def load_client() -> None:
    """Import the OpenAI client now: on a cold, busy machine that takes seconds no attempt should pay for."""
    import langchain_openai  # noqa: F401


def get_chat_model(name: str, *, temperature: float, max_tokens: int, timeout: float) -> BaseChatModel:
    """Create the chat model for `provider/model` with an explicit timeout and one retry layer."""
    provider, _, model = name.partition("/")
    if provider != "openai" or not model:
        raise LLMError(f"unsupported chat model {name!r}; use openai/<model>")
    from langchain_openai import ChatOpenAI

    settings = get_settings()

    # langchain-openai defaults to timeout=None (can hang forever); the SDK retries 429/5xx with backoff.
    return ChatOpenAI(
        model=model,
        temperature=temperature,
        max_completion_tokens=max_tokens,
        timeout=timeout,
        max_retries=CHAT_RETRIES,
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url or None,
        # Usage arrives in a last stream chunk only when asked for (langchain-openai asks on its own
        # only for api.openai.com); tokens_used needs it from any compatible server.
        stream_usage=True,
    )


def classify_failure(exc: Exception, model: str, timeout: float, *, midway: bool = False) -> LLMError:
    """Name the cause of a failed chat call in words a user can act on (`midway`: after tokens arrived)."""
    import openai

    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.RateLimitError):
        return LLMRateLimitedError("the chat service is rate limiting requests")
    if isinstance(exc, openai.AuthenticationError):
        return LLMError("the chat service rejected the API key; check OPENAI_API_KEY")
    if isinstance(exc, openai.PermissionDeniedError):
        return LLMError(f"the chat service refused access to {model}")
    if isinstance(exc, openai.NotFoundError):
        return LLMError(f"the chat service does not know the model {model}")
    if isinstance(exc, openai.BadRequestError):
        return LLMError("the chat service rejected the request as invalid")
    if midway and isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
        return LLMError("the chat service dropped the connection in the middle of its answer")
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(f"the chat service did not answer within {timeout:.3g} s")
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("cannot reach the chat service")
    if isinstance(exc, ValueError):  # a JSON body or stream event that does not parse
        return LLMBadOutputError("the chat service sent a reply that could not be read")
    if isinstance(exc, openai.APIStatusError):
        return LLMError(f"the chat service failed (HTTP {exc.status_code})")
    return LLMError(f"the language model is unavailable ({type(exc).__name__})")
