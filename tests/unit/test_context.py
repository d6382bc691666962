"""Runtime settings: documented defaults, and errors that name the field and its allowed range."""

from __future__ import annotations

import pytest

from graph.context import Context, SettingsError, resolve_context
from tools.settings import get_settings


def test_defaults() -> None:
    ctx = Context()
    assert ctx.top_k == 5
    assert ctx.score_threshold is None
    assert ctx.temperature == 0.0
    assert ctx.max_tokens == 512
    assert ctx.collection == "docs"
    assert get_settings().data_dir == ".rag-agent"
    assert ctx.chat_model == "openai/gpt-4o-mini"
    assert ctx.embedding_model == ""


def test_defaults_come_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_COLLECTION", "manuals")
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", "/srv/index")
    ctx = Context()
    assert (ctx.collection, get_settings().data_dir) == ("manuals", "/srv/index")


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("top_k", 0, "between 1 and 20"),
        ("top_k", 21, "between 1 and 20"),
        ("score_threshold", 1.5, "between 0 and 1"),
        ("temperature", -0.1, "between 0 and 2"),
        ("temperature", 2.5, "between 0 and 2"),
        ("max_tokens", 0, "between 1 and 4096"),
        ("max_tokens", 5000, "between 1 and 4096"),
    ],
)
def test_out_of_range_value_names_field_and_range(field: str, value: float, allowed: str) -> None:
    with pytest.raises(SettingsError) as excinfo:
        Context(**{field: value})
    message = str(excinfo.value)
    assert field in message
    assert allowed in message
    assert repr(value) in message


@pytest.mark.parametrize(("field", "value"), [("top_k", 1), ("top_k", 20), ("score_threshold", 0.0),
                                               ("score_threshold", 1.0), ("temperature", 2.0),
                                               ("max_tokens", 4096)])
def test_range_bounds_are_inclusive(field: str, value: float) -> None:
    assert getattr(Context(**{field: value}), field) == value


@pytest.mark.parametrize("value", ["5", True])
def test_non_number_is_rejected(value: object) -> None:
    with pytest.raises(SettingsError, match="top_k must be a number between 1 and 20"):
        Context(top_k=value)  # type: ignore[arg-type]


def test_settings_error_is_a_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


def test_from_mapping_names_unknown_key() -> None:
    with pytest.raises(SettingsError) as excinfo:
        Context.from_mapping({"top_k": 3, "topk": 4})
    assert "topk" in str(excinfo.value)
    assert "unknown setting" in str(excinfo.value)


def test_from_mapping_builds_valid_context() -> None:
    ctx = Context.from_mapping({"top_k": 3, "score_threshold": 0.5, "max_tokens": None})
    assert (ctx.top_k, ctx.score_threshold, ctx.max_tokens) == (3, 0.5, 512)


def test_from_mapping_validates_values() -> None:
    with pytest.raises(SettingsError, match="top_k"):
        Context.from_mapping({"top_k": 50})


def test_resolve_context_accepts_none_dict_and_context() -> None:
    ctx = Context(top_k=7)
    assert resolve_context(ctx) is ctx
    assert resolve_context(None).top_k == 5
    assert resolve_context({"top_k": 2}).top_k == 2
