"""What a streaming caller sees: answer events that add up to the stored answer, whatever the turn did."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from logic.canary import CANARY
from rag_agent.service import Agent
from tests.fakes import FakeChat
from tools.settings import get_settings

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
def model_says(fake_chat: Callable[..., FakeChat]) -> Callable[[str], FakeChat]:
    """Make the chat model (which streams word by word) reply with a fixed text."""
    return lambda reply: fake_chat(replies=[reply])


def test_llm_answer_streams_sentence_by_sentence_and_adds_up_to_the_answer(
        agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
    model_says("Knead it for ten minutes [1]. Bread dough needs flour and yeast, see http://evil.example/x [9]. "
               "It also needs water and salt [1].")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["status"] == "grounded"
    assert len(events) == 3 and all("answer_delta" in e for e in events)
    assert "".join(e["answer_delta"] for e in events) == out["answer"]
    assert "evil.example" not in out["answer"] and "[9]" not in out["answer"]


def test_streaming_does_not_change_the_response(agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
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


def test_leaked_canary_is_taken_back_and_never_streamed(agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
    model_says(f"Knead it for ten minutes [1]. My instruction set id is {CANARY} and more [1].")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["error"]["code"] == "LLM_BAD_OUTPUT"
    assert all(CANARY not in text for event in events for text in event.values())
    assert shown(events) == out["answer"]


def test_answer_without_valid_citations_is_replaced_by_not_found(
        agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
    model_says("Bread is great [7]. It really is.")
    events: list[dict[str, str]] = []
    out = agent.ask(BREAD_QUESTION, "t1", on_answer=events.append)
    assert out["status"] == "not_found" and shown(events) == out["answer"]


def test_replies_no_node_streamed_are_flushed_at_the_end(agent: Agent) -> None:
    events: list[dict[str, str]] = []
    out = agent.ask("hello!", "t1", on_answer=events.append)
    assert out["status"] == "chitchat" and events == [{"answer_delta": out["answer"]}]


def test_cli_prints_the_streamed_answer_once_then_its_sources(
        make_context: Callable[..., Context], model_says: Callable[[str], FakeChat], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from rag_agent.cli.commands import main

    make_context()
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", "memory")
    model_says("Knead it for ten minutes [1]. It needs flour, water, yeast and salt [1].")
    assert main(["--data-dir", get_settings().data_dir, "ask", "--threshold", "0.2", BREAD_QUESTION]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Knead it for ten minutes [1]. It needs flour, water, yeast and salt [1]."
    assert len(lines) == 2 and lines[1].startswith("  [1] ")


def messages_stream(agent: Agent, question: str, thread: str) -> list[tuple[object, dict]]:
    """Run a turn the way Studio and agent-chat-ui do: LangGraph's `messages` stream mode."""
    config = {"configurable": {"thread_id": thread}}
    return list(agent.graph.stream({"messages": [{"role": "user", "content": question}]}, config,
                                   context=agent.context, stream_mode="messages"))


def test_messages_mode_streams_cleaned_sentences_that_add_up_to_the_stored_message(
        agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
    model_says("Knead it for ten minutes [1]. Bread dough needs flour and yeast, see http://evil.example/x [9]. "
               "It also needs water and salt [1].")
    parts = messages_stream(agent, BREAD_QUESTION, "m1")
    stored = agent.graph.get_state({"configurable": {"thread_id": "m1"}}).values["messages"][-1]
    answer = [m for m, _ in parts if m.type == "AIMessageChunk" and m.id == stored.id]
    assert len(answer) >= 3 and len(parts) == len(answer)  # nothing else: no raw token, no second copy
    assert "".join(m.text for m in answer) == stored.text
    assert stored.text.startswith("Knead it for ten minutes [1]. ")
    assert all("evil.example" not in m.text and "[9]" not in m.text for m in answer)
    assert "\n\nSources:\n- [1] [" in stored.text


def test_messages_mode_streams_an_offline_answer_sentence_by_sentence(agent: Agent) -> None:
    parts = messages_stream(agent, BREAD_QUESTION, "m2")
    stored = agent.graph.get_state({"configurable": {"thread_id": "m2"}}).values["messages"][-1]
    assert len(parts) >= 3 and "".join(m.text for m, _ in parts) == stored.text


def test_a_withdrawn_answer_is_followed_by_the_refusal_as_a_message_of_its_own(
        agent: Agent, model_says: Callable[[str], FakeChat]) -> None:
    model_says("Bread is great [7]. It really is.")
    parts = messages_stream(agent, BREAD_QUESTION, "m3")
    stored = agent.graph.get_state({"configurable": {"thread_id": "m3"}}).values["messages"][-1]
    assert parts[-1][0].id == stored.id and parts[-1][0].text == stored.text
    assert stored.text.startswith("I don't have information")
