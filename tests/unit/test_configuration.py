"""One configuration story: per-run knobs on Context, deployment settings from the environment only."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import compile_graph
from graph.context import Context, SettingsError
from rag_agent.cli.commands import main
from tests.fakes import FakeChat
from tools.settings import get_settings

QUESTION = "How long should I knead bread dough?"


def run(context: dict[str, Any]) -> dict[str, Any]:
    """Invoke the graph as a server run does: the context arrives as a plain dict."""
    app = compile_graph(InMemorySaver())
    state: dict[str, Any] = app.invoke({"messages": [HumanMessage(QUESTION)]}, {"configurable": {"thread_id": "r"}},
                                       context=context)
    return state


@pytest.mark.parametrize(("key", "variable"), [
    ("data_dir", "RAG_AGENT_DATA_DIR"), ("qdrant_url", "QDRANT_URL"), ("openai_base_url", "OPENAI_BASE_URL"),
    ("checkpointer", "RAG_AGENT_CHECKPOINTER"), ("session_ttl", "RAG_AGENT_SESSION_TTL"),
])
def test_a_run_cannot_set_a_deployment_setting(data_dir: str, monkeypatch: pytest.MonkeyPatch, key: str,
                                               variable: str) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", data_dir)
    with pytest.raises(SettingsError) as refused:
        run({key: "/another/folder", "embedding_model": "hash/256"})
    message = str(refused.value)
    assert f"{key} cannot be set per run" in message and variable in message
    assert "/another/folder" not in message and data_dir not in message  # no paths, theirs or ours


def test_a_collection_outside_the_allow_list_is_refused(make_context: Callable[..., Context],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError, match=r"collection 'private' is not served here; choose one of: docs"):
        run({"collection": "private", "embedding_model": "hash/256"})
    monkeypatch.setenv("RAG_AGENT_COLLECTIONS", "docs,manuals")
    assert Context(collection="manuals").collection == "manuals"


def test_missing_index_error_names_no_server_path(make_context: Callable[..., Context]) -> None:
    state = run({"collection": "docs", "embedding_model": "hash/256", "score_threshold": 0.2})
    assert state["status"] == "grounded"
    state = compile_graph(InMemorySaver()).invoke({"messages": [HumanMessage(QUESTION)]},
                                                  {"configurable": {"thread_id": "m"}},
                                                  context=make_context(collection="empty"))
    assert state["error"]["code"] == "INDEX_MISSING"
    assert get_settings().data_dir not in state["answer"]


@pytest.fixture
def model(fake_chat: Callable[..., FakeChat]) -> FakeChat:
    return fake_chat(replies=["Knead the dough for ten minutes until smooth [1]."])


def test_system_prompt_is_a_per_run_knob(make_context: Callable[..., Context], model: FakeChat) -> None:
    state = run({"embedding_model": "hash/256", "score_threshold": 0.2, "system_prompt": "Answer like a baker."})
    assert state["status"] == "grounded"
    assert model.prompts[0][0].content == "Answer like a baker."


def test_extractive_answer_mode_calls_no_model_even_with_a_key(make_context: Callable[..., Context],
                                                              model: FakeChat) -> None:
    state = run({"embedding_model": "hash/256", "score_threshold": 0.2, "answer_mode": "extractive"})
    assert state["status"] == "grounded" and state["model_used"].startswith("extractive")
    assert model.prompts == []


def test_llm_answer_mode_needs_a_chat_model_in_the_deployment() -> None:
    with pytest.raises(SettingsError, match="answer_mode 'llm' needs a chat model"):
        Context(answer_mode="llm")


def test_per_run_defaults_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_TOP_K", "7")
    monkeypatch.setenv("RAG_AGENT_ANSWER_MODE", "extractive")
    assert (Context().top_k, Context().answer_mode) == (7, "extractive")
    monkeypatch.setenv("RAG_AGENT_TOP_K", "many")
    with pytest.raises(SettingsError, match="RAG_AGENT_TOP_K must be a number"):
        Context()


def test_config_prints_the_settings_object_with_secrets_masked(tmp_path: Any, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:hunter22@127.0.0.1:9/v1")
    monkeypatch.setenv("QDRANT_API_KEY", "qdrant-secret")
    assert main(["--data-dir", str(tmp_path), "config", "--json"]) == 0
    out = capsys.readouterr().out
    shown = json.loads(out)["settings"]
    assert shown["data_dir"] == str(tmp_path)
    assert shown["openai_api_key"] == shown["qdrant_api_key"] == "***"
    assert shown["openai_base_url"] == "http://user:***@127.0.0.1:9/v1"
    assert "hunter22" not in out and "sk-very-secret-key" not in out and "qdrant-secret" not in out
    assert set(shown) == set(get_settings().shown())  # the very object the agent runs with


def test_the_environment_is_read_in_one_place() -> None:
    # Deployment settings come from tools/settings.py; graph/context.py reads only per-run knob defaults;
    # rag_agent/cli/warm_protocol.py, the stdlib-only asker's side, only finds the socket and digests the variables.
    root = Path(__file__).resolve().parents[2]
    readers = {path.relative_to(root).as_posix()
               for folder in ("graph", "nodes", "logic", "tools", "rag_agent")
               for path in (root / folder).rglob("*.py")
               if re.search(r"os\.environ|getenv", path.read_text(encoding="utf-8"))}
    assert readers == {"tools/settings.py", "graph/context.py", "rag_agent/cli/warm_protocol.py"}


def test_server_settings_are_fields_of_the_settings_object(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAG_AGENT_VISITOR_SECRET", "v" * 40)
    monkeypatch.setenv("RAG_AGENT_TRUST_PROXY", "1")
    monkeypatch.setenv("RAG_AGENT_RECORDS_RETENTION_DAYS", "")  # empty, as before: the default
    monkeypatch.setenv("RAG_AGENT_ADMINS", "root")
    settings = get_settings()
    assert settings.trust_proxy and settings.records_retention_days == 90 and settings.admins == "root"
    assert "v" * 40 in settings.secrets()
    assert main(["config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["settings"]
    assert shown["visitor_secret"] == "***" and shown["admins"] == "root"
    monkeypatch.setenv("RAG_AGENT_MAX_BODY_BYTES", "10")
    with pytest.raises(SettingsError, match="RAG_AGENT_MAX_BODY_BYTES: Input should be greater than or equal to 1024"):
        get_settings()
