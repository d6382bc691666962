"""The grounding check: what a user sees when an answer says more than the cited sections."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from logic.grounding import check_lexical, split_claims
from tests.fakes import FakeChat

Ask = Callable[..., dict[str, Any]]

BREAD_QUESTION = "How long should I knead bread dough?"
SUPPORTED = "Knead the dough for ten minutes until it is smooth [1]."
INVENTED = "Bread was first baked by the ancient Egyptians around 8000 BC [1]."


@pytest.fixture
def chat_reply(fake_chat: Callable[..., FakeChat]) -> Callable[[str], FakeChat]:
    """Configure a fake chat model (without structured output, so no judge) that always replies `reply`."""
    return lambda reply: fake_chat(replies=[reply])


def test_an_invented_sentence_is_removed_by_default(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply(f"{SUPPORTED} {INVENTED}")
    state = ask(BREAD_QUESTION)
    assert state["status"] == "grounded"
    assert state["grounding"] == {
        "is_fully_grounded": False,
        "unsupported_claims": ["Bread was first baked by the ancient Egyptians around 8000 BC."],
        "support": 0.5,
        # The fake model has no structured output, so the judge falls back to the lexical check.
        "method": "lexical",
    }
    # Strict: the invented sentence is neither in the answer nor in the stored thread.
    assert state["answer"] == SUPPORTED
    assert all("Egyptians" not in str(m.content) for m in state["messages"])
    assert state["flagged"] is True and "removed" in state["flag_reason"]


def test_flag_mode_keeps_an_invented_sentence_with_a_note(ask: Ask, chat_reply: Callable[[str], None],
                                                          make_context: Callable[..., Any]) -> None:
    chat_reply(f"{SUPPORTED} {INVENTED}")
    state = ask(BREAD_QUESTION, context=make_context(grounding_mode="flag"))
    # Flagged, not removed: the answer as written comes first, then the note (a stream stays a prefix).
    assert state["answer"].startswith(f"{SUPPORTED} {INVENTED}")
    assert state["answer"].endswith("(Not confirmed by the cited sections: “Bread was first baked by the ancient "
                                    "Egyptians around 8000 BC.”)_")
    assert state["messages"][-1].text.split("\n\nSources:\n")[0] == state["answer"]
    assert state["flagged"] is True and "kept with a note" in state["flag_reason"]


def test_partly_supported_answer_is_less_confident(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply(SUPPORTED)
    full = ask(BREAD_QUESTION, thread="a")
    chat_reply(f"{SUPPORTED} {INVENTED}")
    half = ask(BREAD_QUESTION, thread="b")
    assert full["grounding"]["is_fully_grounded"] is True
    assert half["confidence"] == pytest.approx(full["confidence"] / 2, abs=0.002)


def test_a_paraphrase_of_the_source_is_fully_grounded(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply("You should knead bread dough for about ten minutes [1].\n\n- Until it is smooth [1].")
    state = ask(BREAD_QUESTION)
    assert state["grounding"]["is_fully_grounded"] is True and state["grounding"]["support"] == 1.0
    assert "Not confirmed" not in state["answer"]


def test_an_answer_with_nothing_supported_is_not_found(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply(f"{INVENTED} Sourdough starters need feeding with rye flour every day [1].")
    state = ask(BREAD_QUESTION)
    assert state["status"] == "not_found"
    assert state["citations"] == []
    assert "I don't have information" in state["answer"] and "Egyptians" not in state["answer"]
    assert state["grounding"]["support"] == 0 and len(state["grounding"]["unsupported_claims"]) == 2
    assert 0 <= state["confidence"] <= 1


@pytest.mark.parametrize("question", [BREAD_QUESTION, "What is Isaac Sim?", "How is synthetic data generated?",
                                      "How hot should the oven be?"])
def test_quoted_offline_answers_are_fully_grounded(ask: Ask, question: str) -> None:
    state = ask(question)
    assert state["status"] == "grounded"
    assert state["grounding"] == {"is_fully_grounded": True, "unsupported_claims": [], "support": 1.0,
                                  "method": "lexical"}
    assert 0 <= state["confidence"] <= 1


def test_refused_and_chitchat_turns_carry_no_grounding(ask: Ask, make_context: Any) -> None:
    refused = ask(BREAD_QUESTION, context=make_context(score_threshold=0.99))
    assert refused["status"] == "not_found" and refused["grounding"] is None
    assert refused["confidence"] is not None and refused["confidence"] < 0.5
    hello = ask("hello", thread="t2")
    assert hello["status"] == "chitchat" and hello["grounding"] is None and hello["confidence"] is None


def test_markers_after_a_full_stop_belong_to_the_sentence_before() -> None:
    answer = "Knead the dough well. [1] Bake the loaf hot. [2][1]\n\n```\nbake --hot\n```\n[2]"
    assert split_claims(answer) == ["Knead the dough well. [1]", "Bake the loaf hot. [2][1]",
                                    "```\nbake --hot\n``` [2]"]


def test_a_sentence_is_checked_against_the_chunks_it_cites() -> None:
    chunks = ["Knead the dough for ten minutes.", "Bake the loaf at two hundred and twenty degrees."]
    assert check_lexical("Knead the dough for ten minutes [1].", chunks).supported == [True]
    assert check_lexical("Knead the dough for ten minutes [2].", chunks).supported == [False]
    # Without a marker, any cited chunk may support it.
    assert check_lexical("Bake the loaf at two hundred and twenty degrees.", chunks).supported == [True]


def test_lead_ins_and_bare_markers_are_not_claims() -> None:
    assert split_claims("To bake it, do the following:\n- Knead the dough [1].\n[2]") == ["- Knead the dough [1]. [2]"]
