"""The conversation a follow-up belongs to: the last earlier user questions, without chit-chat or the agent."""

from langchain_core.messages import AIMessage, HumanMessage

from graph.context import Context
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
