"""What a streaming caller sees: answer events that add up to the stored answer, whatever the turn did."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

import nodes.generate_grounded
from graph.context import Context
from logic.canary import CANARY
from rag_agent.service import Agent

BREAD_QUESTION = "How long should I knead bread dough?"


def shown(events: list[dict[str, str]]) -> str:
    """Apply answer events the way a client shows them."""
    text = ""
    for event in events:
        text = event["answer_replace"] if "answer_replace" in event else text + event["answer_delta"]
    return text


@pytest.fixture
def agent(make_context: Callable[..., Context]) -> Agent:
    return Agent(make_context(), checkpointer=InMemorySaver())


@pytest.fixture
def model_says(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make the chat model (which streams word by word) reply with a fixed text."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")

    def configure(reply: str) -> None:
        monkeypatch.setattr(nodes.generate_grounded, "get_chat_model",
                            lambda name, **kwargs: GenericFakeChatModel(messages=iter([AIMessage(reply)])))

    return configure


def test_llm_answer_streams_sentence_by_sentence_and_adds_up_to_the_answer(
        agent: Agent, model_says: Callable[[str], None]) -> None:
    model_says("Knead it for ten minutes [1]. Bread dough needs flour and yeast, see http://evil.example/x [9]. "
               "It also needs water and salt [1].")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["status"] == "grounded"
    assert len(events) == 3 and all("answer_delta" in e for e in events)
    assert "".join(e["answer_delta"] for e in events) == out["answer"]
    assert "evil.example" not in out["answer"] and "[9]" not in out["answer"]


def test_streaming_does_not_change_the_response(agent: Agent, model_says: Callable[[str], None]) -> None:
    model_says("Knead it for ten minutes [1].")
    streamed = agent.ask(BREAD_QUESTION, "t1", on_answer=lambda event: None)
    model_says("Knead it for ten minutes [1].")
    plain = agent.ask(BREAD_QUESTION, "t2")
    drop = {"thread_id", "turn_id", "timestamp", "execution_time_seconds"}
    assert {k: v for k, v in streamed.items() if k not in drop} == {k: v for k, v in plain.items() if k not in drop}


def test_extractive_answer_arrives_in_one_delta(agent: Agent) -> None:
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["status"] == "grounded" and events == [{"answer_delta": out["answer"]}]


def test_leaked_canary_is_taken_back_and_never_streamed(agent: Agent, model_says: Callable[[str], None]) -> None:
    model_says(f"Knead it for ten minutes [1]. My instruction set id is {CANARY} and more [1].")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["error"]["code"] == "LLM_BAD_OUTPUT"
    assert all(CANARY not in text for event in events for text in event.values())
    assert shown(events) == out["answer"]


def test_answer_without_valid_citations_is_replaced_by_not_found(
        agent: Agent, model_says: Callable[[str], None]) -> None:
    model_says("Bread is great [7]. It really is.")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["status"] == "not_found" and shown(events) == out["answer"]


def test_replies_no_node_streamed_are_flushed_at_the_end(agent: Agent) -> None:
    events: list[dict[str, str]] = []
    out = agent.ask("hello!", "t1", on_answer=events.append)
    assert out["status"] == "chitchat" and events == [{"answer_delta": out["answer"]}]


def test_cli_prints_the_streamed_answer_once_then_its_sources(
        make_context: Callable[..., Context], model_says: Callable[[str], None], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from rag_agent.cli import main

    ctx = make_context()
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", "memory")
    model_says("Knead it for ten minutes [1]. It needs flour, water, yeast and salt [1].")
    assert main(["--data-dir", ctx.data_dir, "ask", "--threshold", "0.2", BREAD_QUESTION]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Knead it for ten minutes [1]. It needs flour, water, yeast and salt [1]."
    assert len(lines) == 2 and lines[1].startswith("  [1] ")
