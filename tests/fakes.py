"""The one fake chat model of the test suite, and the one place it is installed: tools.chat.get_chat_model.

It replies from a script (streamed word by word, optionally slowly), answers structured-output calls
(classify's rewrite, the grounding judge) only for the schemas a test configures, can fail like a
provider, and records every prompt and every get_chat_model call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import Field

import tools.chat


class FakeChat(BaseChatModel):
    """A scripted, recording chat model; each reply is used once, the last one repeats."""

    replies: list[str] = Field(default_factory=lambda: ["Knead the dough for ten minutes until smooth [1]."])
    # Schema class name -> the object to return, or a function of the prompt returning it.
    structured: dict[str, Any] = Field(default_factory=dict)
    error: Exception | None = None
    token_delay: float = 0.0
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    used: int = 0

    @property
    def _llm_type(self) -> str:
        return "fake-chat"

    def _next(self, messages: list[BaseMessage]) -> str:
        """Record the prompt, fail if told to, and return the next scripted reply."""
        self.prompts.append(messages)
        if self.error is not None:
            raise self.error
        reply = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return reply

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._next(messages)))])

    def _stream(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for word in self._next(messages).split(" "):
            time.sleep(self.token_delay)
            yield ChatGenerationChunk(message=AIMessageChunk(content=word + " "))

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Answer with the configured object for `schema`; unconfigured schemas fail as a plain model's would."""

        def answer(prompt: list[BaseMessage]) -> Any:
            if schema.__name__ not in self.structured:
                raise NotImplementedError(f"no structured output configured for {schema.__name__}")
            self.prompts.append(prompt)
            found = self.structured[schema.__name__]
            parsed = found(prompt) if callable(found) else found
            return {"raw": AIMessage(""), "parsed": parsed, "parsing_error": None} if kwargs.get("include_raw") \
                else parsed

        return RunnableLambda(answer)


def install(monkeypatch: pytest.MonkeyPatch, model: FakeChat, key: str = "sk-test-fake") -> FakeChat:
    """Give the deployment a chat model (OPENAI_API_KEY) and make get_chat_model return `model`."""
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def get_chat_model(name: str, **kwargs: Any) -> FakeChat:
        model.calls.append({"name": name, **kwargs})
        return model

    monkeypatch.setattr(tools.chat, "get_chat_model", get_chat_model)
    return model


@pytest.fixture
def fake_chat(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeChat]:
    """Install a FakeChat built from the given fields (replies=[...], structured={...}, error=..., ...)."""
    return lambda **fields: install(monkeypatch, FakeChat(**fields))
