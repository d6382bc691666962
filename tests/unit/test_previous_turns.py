"""The conversation a follow-up belongs to: the last earlier user questions, without chit-chat or the agent."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from graph.context import Context
from logic import answerability
from nodes import retrieve
from nodes.retrieve import _off_topic, _previous_turns


def test_the_last_two_earlier_questions_stand_for_the_conversation() -> None:
    messages = [HumanMessage("How do I appeal?"), AIMessage("File form A."), HumanMessage("Is there a fee?"),
                AIMessage("Yes, $50."), HumanMessage("thanks!"), AIMessage("You're welcome!"),
                HumanMessage("Can it be waived?"), AIMessage("Yes."), HumanMessage("What about if I'm sick?")]
    assert _previous_turns(messages, Context()) == ["Is there a fee?", "Can it be waived?"]
    assert _previous_turns(messages[-1:], Context()) == []


def test_the_check_is_skipped_on_a_first_turn_and_for_embedders_it_was_not_fitted_on() -> None:
    assert _off_topic("local/all-MiniLM-L6-v2", [1.0, 0.0], []) is None
    assert _off_topic("hash/256", [1.0, 0.0], ["What is X?"]) is None


def test_a_section_vector_the_index_returned_is_used_and_not_embedded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    embedded: list[str] = []

    def fake_vector(name: str, text: str) -> tuple[float, ...]:
        embedded.append(text)
        return (1.0, 0.0) if "appeal" in text else (0.0, 1.0)

    monkeypatch.setattr(retrieve, "_conversation_vector", fake_vector)
    measure = retrieve._off_topic("local/all-MiniLM-L6-v2", [1.0, 0.0], ["How do I appeal?"])
    assert measure is not None
    section = {"title": "Flu", "heading_hierarchy": [], "text": "Flu shots are free."}
    far = measure(section, [0.0, 1.0])  # type: ignore[arg-type]
    assert embedded == ["How do I appeal?"]  # the earlier question only: the section came with its vector
    assert far == pytest.approx(answerability.CONTEXT_HINGE)  # orthogonal to the conversation
    assert measure(section, [1.0, 0.0]) == 0.0  # type: ignore[arg-type]
    measure(section, None)  # a cached search has no vectors: the section is embedded
    assert embedded[-1].startswith("Flu")
