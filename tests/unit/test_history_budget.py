"""Long conversations: the model sees only the latest turns within a token budget, and the user is told once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context, SettingsError
from logic.history import HISTORY_NOTE, recent_history
from nodes.classify import Rewrite
from rag_agent.service import Agent
from tests.fakes import FakeChat

# Faithful to the bread page (the grounding check would flag anything else) and long enough to fill the budget.
ANSWER = ("Bread dough needs flour, water, yeast and salt, and the dough should be kneaded for ten minutes until "
          "it is smooth: knead the bread dough for ten minutes, until smooth [1].")
QUESTIONS = ["How long should I knead bread dough?", "And how long should it rest?",
             "What about the oven temperature for it?", "And for how long does it bake?"]


REWRITE_PROMPTS: list[str] = []  # what classify's rewrite was shown, turn by turn


def rewrite(prompt: list[BaseMessage]) -> Rewrite:
    """Stand in for the chat model's structured rewrite, recording the conversation it was shown."""
    REWRITE_PROMPTS.append(str(prompt[-1].content))
    return Rewrite(intent="question", standalone_query="How long should bread dough be kneaded and rested?")


@pytest.fixture
def chat_agent(make_context: Callable[..., Context], fake_chat: Callable[..., FakeChat]) -> Callable[..., Agent]:
    REWRITE_PROMPTS.clear()
    fake_chat(replies=[ANSWER], structured={"Rewrite": rewrite})
    # About the prompt's history, not the gate: every turn goes on to the (fake) model.
    return lambda **settings: Agent(make_context(**{"score_threshold": 0.0, **settings}), InMemorySaver())


def test_older_turns_are_left_out_of_the_prompt_and_the_user_is_told_once(chat_agent: Callable[..., Agent]) -> None:
    agent = chat_agent(history_tokens=80)
    replies = [agent.ask(q, "long") for q in QUESTIONS]
    assert [r["status"] for r in replies] == ["grounded"] * 4
    assert [r["history_trimmed"] for r in replies] == [False, False, True, True]
    assert [r["answer"].endswith(HISTORY_NOTE) for r in replies] == [False, False, True, False]
    # The third turn's rewrite saw the second question but no longer the first.
    assert QUESTIONS[1] in REWRITE_PROMPTS[1] and QUESTIONS[0] not in REWRITE_PROMPTS[1]
    stored = agent.graph.get_state({"configurable": {"thread_id": "long"}}).values["messages"]
    assert all(HISTORY_NOTE not in m.content for m in stored)  # the note is for the user, not the history


def test_a_generous_budget_keeps_the_whole_conversation(chat_agent: Callable[..., Agent]) -> None:
    agent = chat_agent(history_tokens=8000)
    replies = [agent.ask(q, "short") for q in QUESTIONS]
    assert not any(r["history_trimmed"] for r in replies)
    assert QUESTIONS[0] in REWRITE_PROMPTS[-1]


def test_reset_lets_the_note_be_shown_again(chat_agent: Callable[..., Agent]) -> None:
    agent = chat_agent(history_tokens=80)
    for q in QUESTIONS[:3]:
        agent.ask(q, "again")
    agent.ask("/reset", "again")
    assert [agent.ask(q, "again")["answer"].endswith(HISTORY_NOTE) for q in QUESTIONS[:3]] == [False, False, True]


@pytest.mark.parametrize("value", [10, 9000])
def test_history_budget_is_validated(value: int) -> None:
    with pytest.raises(SettingsError, match="history_tokens must be between 50 and 8000"):
        Context(history_tokens=value)


def test_the_follow_up_reader_sees_answers_without_their_sources_list() -> None:
    reply = "Use `rag-agent ingest` [1].\n\nSources:\n- [1] [Ingest › Crawling](https://docs.example.com/ingest#crawl)"
    recent, trimmed = recent_history([HumanMessage("How do I ingest?"), AIMessage(reply)], budget=800)
    assert [m.text for m in recent] == ["How do I ingest?", "Use `rag-agent ingest` [1]."]
    assert not trimmed
