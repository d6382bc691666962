"""Every network client is built with a timeout and a single retry layer."""

import pytest

import tools.embeddings
from tools.chat import get_chat_model


def test_chat_client_has_a_timeout_and_bounded_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = get_chat_model("openai/gpt-4o-mini", temperature=0.0, max_tokens=100, timeout=7.5)
    assert model.request_timeout == 7.5  # type: ignore[attr-defined]
    assert model.max_retries == 2  # type: ignore[attr-defined]


def test_cohere_client_has_a_timeout_and_no_second_retry_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COHERE_API_KEY", "co-test")
    embedder = tools.embeddings._build("cohere/embed-english-v3.0")
    assert embedder.request_timeout == 30  # type: ignore[attr-defined]
    assert embedder.max_retries == 1  # type: ignore[attr-defined]  # the SDK's own retries are the only layer
