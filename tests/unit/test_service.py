"""The Python/CLI entry point: the JSON response, turn counting, thread ids and the checkpoint store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from logic.errors import InvalidInputError, StorageError
from rag_agent.service import Agent, check_thread_id, open_checkpointer
from tools.settings import get_settings

DOCUMENTED_KEYS = {
    "thread_id", "turn_id", "timestamp", "turn", "status", "answer", "grounded", "retrieval_query", "citations",
    "retrieved", "top_score", "gate_score", "flagged", "flag_reason", "threshold",
    "model_used", "embedding_model", "tokens_used", "tokens_estimated",
    "execution_time_seconds", "error", "grounding", "confidence", "history_trimmed", "not_found",
    "retrieval_cached", "readings",
}
CITATION_KEYS = {"index", "chunk_id", "source", "source_url", "title", "heading_hierarchy", "text", "score"}
BREAD_QUESTION = "How long should I knead bread dough?"


@pytest.fixture
def agent(make_context: Callable[..., Context]) -> Agent:
    return Agent(make_context(), checkpointer=InMemorySaver())


def test_response_has_every_documented_key(agent: Agent) -> None:
    response = agent.ask(BREAD_QUESTION, thread_id="t1")
    assert set(response) == DOCUMENTED_KEYS
    json.dumps(response)  # the CLI prints it with --json


def test_grounded_response_values(agent: Agent) -> None:
    response = agent.ask(BREAD_QUESTION, thread_id="t1")
    assert response["thread_id"] == "t1"
    assert response["status"] == "grounded"
    assert response["grounded"] is True
    assert response["retrieval_query"] == BREAD_QUESTION
    assert response["citations"][0]["source"] == "baking.md"
    assert set(response["citations"][0]) == CITATION_KEYS
    assert set(response["retrieved"][0]) == {"chunk_id", "source", "score", "relevance"}
    # The offline answer quotes the documentation, so every sentence is supported.
    assert response["grounding"] == {"is_fully_grounded": True, "unsupported_claims": [], "support": 1.0,
                                     "method": "lexical"}
    assert 0.5 < response["confidence"] <= 1
    assert response["top_score"] == max(r["score"] for r in response["retrieved"])  # the best cosine
    assert response["gate_score"] >= response["threshold"] == 0.1
    assert isinstance(response["flagged"], bool) and isinstance(response["flag_reason"], str)
    assert response["embedding_model"] == "hash/256"
    assert response["model_used"]
    assert response["tokens_used"] > 0 and response["tokens_estimated"] is True  # extractive: no usage data
    assert response["execution_time_seconds"] >= 0
    assert response["error"] is None


def test_turn_counts_per_thread(agent: Agent) -> None:
    assert agent.ask("What is Isaac Sim?", thread_id="t1")["turn"] == 1
    assert agent.ask("How do I use it for synthetic data?", thread_id="t1")["turn"] == 2
    assert agent.ask("What is Isaac Sim?", thread_id="t2")["turn"] == 1


def test_second_turn_remembers_the_topic(agent: Agent) -> None:
    agent.ask("What is Isaac Sim?", thread_id="t1")
    response = agent.ask("How do I use it for synthetic data?", thread_id="t1")
    assert "Isaac Sim" in response["retrieval_query"]


def test_missing_thread_id_starts_a_new_thread(agent: Agent) -> None:
    first = agent.ask("hello")
    second = agent.ask("hello")
    assert first["thread_id"] != second["thread_id"]
    assert first["turn"] == second["turn"] == 1
    check_thread_id(first["thread_id"])


@pytest.mark.parametrize("thread_id", ["../etc", "a" * 200, "x' OR 1=1", "-leading-dash", "a/b", "a..b"])
def test_invalid_thread_id_is_an_input_error(agent: Agent, thread_id: str) -> None:
    response = agent.ask(BREAD_QUESTION, thread_id=thread_id)
    assert set(response) == DOCUMENTED_KEYS
    assert response["status"] == "error"
    assert response["grounded"] is False
    assert response["error"]["code"] == "INVALID_INPUT"
    assert "thread id" in response["error"]["message"]
    assert response["citations"] == []


@pytest.mark.parametrize("thread_id", ["a", "user-42", "session_1.2:abc", "A" * 128])
def test_valid_thread_ids_are_accepted(thread_id: str) -> None:
    assert check_thread_id(thread_id) == thread_id


def test_thread_id_length_limit() -> None:
    with pytest.raises(InvalidInputError):
        check_thread_id("A" * 129)


def test_error_response_shape(agent: Agent) -> None:
    response = agent.ask("", thread_id="t1")
    assert response["status"] == "error"
    assert response["error"]["code"] == "INVALID_INPUT"
    assert set(response["error"]) == {"code", "message"}
    assert response["citations"] == [] and response["retrieved"] == []
    assert response["grounding"] is None and response["confidence"] is None


def test_missing_index_response(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "empty"))
    ctx = Context(embedding_model="hash/256")
    response = Agent(ctx, checkpointer=InMemorySaver()).ask(BREAD_QUESTION, thread_id="t1")
    assert response["status"] == "error"
    assert response["error"]["code"] == "INDEX_MISSING"


def test_default_checkpointer_keeps_memory_across_agents(make_context: Callable[..., Context]) -> None:
    ctx = make_context()
    Agent(ctx).ask("What is Isaac Sim?", thread_id="persisted")
    response = Agent(ctx).ask("How do I use it for synthetic data?", thread_id="persisted")
    assert response["turn"] == 2
    assert (Path(get_settings().data_dir) / "checkpoints.sqlite").is_file()


def test_open_checkpointer_under_a_regular_file_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(StorageError) as excinfo:
        open_checkpointer(blocker / "data")
    assert str(blocker / "data") in excinfo.value.message
    assert excinfo.value.code == "STORAGE_ERROR"


def test_non_text_question_is_an_input_error(agent: Agent) -> None:
    response = agent.ask(123, thread_id="t1")  # type: ignore[arg-type]
    assert response["error"]["code"] == "INVALID_INPUT"
