"""The whole compiled graph over a tiny hash-embedded corpus: what a user sees turn by turn."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

import nodes.retrieve
from graph.context import Context
from logic.heuristics import RESET_REPLY
from logic.not_found import hedge
from nodes.generate_grounded import HEDGE_BELOW, READ_DOUBT
from tests.fakes import FakeChat
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

Ask = Callable[..., dict[str, Any]]

BREAD_QUESTION = "How long should I knead bread dough?"


def assert_plain_conversation(state: dict[str, Any]) -> None:
    """Messages are the user's and the agent's text; only standard citation annotations ride along."""
    for message in state["messages"]:
        assert isinstance(message, HumanMessage | AIMessage)
        assert "citations" not in message.additional_kwargs
        assert "chunk_id" not in message.text
        blocks = message.content if isinstance(message.content, list) else []
        assert all(b["type"] == "text" for b in blocks)
        assert all(a["type"] == "citation" for b in blocks for a in b.get("annotations", []))


# --- one turn -------------------------------------------------------------------------------------------


def test_grounded_answer_cites_the_matching_doc(ask: Ask) -> None:
    state = ask(BREAD_QUESTION)
    assert state["status"] == "grounded"
    assert state["grounded"] is True
    assert "Knead the dough for ten minutes" in state["answer"]
    assert state["citations"]
    assert {c["source"] for c in state["citations"]} == {"baking.md"}
    assert [c["index"] for c in state["citations"]] == list(range(1, len(state["citations"]) + 1))
    assert state["retrieved"][0]["source"] == "baking.md"
    # top_score is the best similarity; the gate's score is its own figure, a probability that cleared the threshold.
    assert state["top_score"] == max(c["score"] for c in state["retrieved"]) >= 0.2
    assert 1 >= state["gate_score"] >= state["threshold"]
    assert state["gate_score"] >= state["threshold"]
    assert state["embedding_model"] == "hash/256"
    assert state["error"] is None


def test_grounded_answer_is_the_last_message_with_standard_citation_annotations(ask: Ask) -> None:
    state = ask(BREAD_QUESTION)
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]
    message = state["messages"][-1]
    assert_plain_conversation(state)
    # A chat UI that drops annotations still shows the sources: the message ends with them as Markdown links.
    answer, sources = message.text[:len(state["answer"])], message.text[len(state["answer"]):]
    assert answer == state["answer"] and sources.startswith("\n\nSources:\n- [1] [Baking bread")
    lines = sources.splitlines()[3:]
    assert len(lines) == len(state["citations"])
    for line, citation in zip(lines, state["citations"], strict=True):
        assert line.startswith(f"- [{citation['index']}] [Baking bread")
        assert line.endswith(f"]({citation['source_url']})")
    # What a generic LangChain client reads: one text block with a citation annotation on every [n] marker.
    [block] = message.content_blocks
    assert block["type"] == "text" and block["text"] == message.text
    markers = [(m.start(), int(m.group(1))) for m in re.finditer(r"\[(\d+)\]", state["answer"])]
    assert len(markers) > len(state["citations"])  # the answer cites a source more than once
    by_index = {c["index"]: c for c in state["citations"]}
    annotations = block["annotations"]
    assert [(a["start_index"], a["url"], a["cited_text"]) for a in annotations] == [
        (start, by_index[n]["source_url"], by_index[n]["text"]) for start, n in markers]
    assert all(a["url"].startswith("baking.md#") and a["title"].startswith("Baking bread") for a in annotations)
    spanned = [answer[a["start_index"]:a["end_index"]] for a in annotations]
    assert spanned == [f"[{n}]" for _, n in markers]


def test_retrieved_chunks_are_ranked_and_bounded_by_top_k(
    ask: Ask, make_context: Callable[..., Context]
) -> None:
    state = ask(BREAD_QUESTION, context=make_context(top_k=2))
    scores = [c["score"] for c in state["retrieved"]]
    assert len(scores) == 2
    assert scores == sorted(scores, reverse=True)


def test_offline_answer_says_it_is_quoted(ask: Ask) -> None:
    state = ask(BREAD_QUESTION)
    assert state["model_used"].startswith("extractive")
    assert "no language model is configured" in state["answer"]


def test_an_unsure_offline_answer_says_the_docs_do_not_state_it(ask: Ask, make_context: Callable[..., Context]) -> None:
    sure = ask(BREAD_QUESTION, "t-sure", context=make_context(score_threshold=0.0))
    # The same sections, judged against a threshold they barely clear: the quote is only the nearest there is.
    barely = ask(BREAD_QUESTION, "t-barely", context=make_context(score_threshold=sure["gate_score"] - 0.001))
    assert sure["confidence"] >= HEDGE_BELOW > barely["confidence"]
    # It names what the documentation does not directly answer: the question, as the user asked it.
    lead = "The documentation does not directly answer “How long should I knead bread dough”; the closest it comes is:"
    assert hedge(BREAD_QUESTION) == lead
    assert not sure["answer"].startswith(lead)
    assert barely["status"] == "grounded" and barely["answer"].startswith(lead)
    assert barely["answer"].removeprefix(lead).strip() == sure["answer"].strip()  # the same quote, introduced
    assert barely["messages"][-1].text.startswith(lead)


def test_an_answer_the_reading_model_doubts_is_hedged(ask: Ask, make_context: Callable[..., Context],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = {"answers": 0.9}

    def reading(ctx: Context, name: str, embeddings: Any, query: str, threshold: float,
                readings: list[Any]) -> Callable[..., float]:
        def read(best: list[Any], evidence: dict[str, float]) -> float:
            readings[:] = [{"chunk_id": best[0]["chunk_id"], "units": [0], "answers": verdict["answers"]}]
            return verdict["answers"]
        return read

    # The hash embedder has no reading model: stand one in that reads the best passage with a fixed verdict.
    monkeypatch.setattr(nodes.retrieve, "_reader", reading)
    trusted = ask(BREAD_QUESTION, "t-read-yes", context=make_context(score_threshold=0.0))
    verdict["answers"] = READ_DOUBT / 2
    doubted = ask(BREAD_QUESTION, "t-read-no", context=make_context(score_threshold=0.0))
    assert trusted["readings"] and doubted["readings"][0]["answers"] < READ_DOUBT
    lead = hedge(BREAD_QUESTION)
    assert trusted["confidence"] >= HEDGE_BELOW and not trusted["answer"].startswith(lead)
    # Still answered (the gate let it through), but not presented as the answer, nor as a sure one.
    assert doubted["status"] == "grounded" and doubted["answer"].startswith(lead)
    assert doubted["confidence"] < HEDGE_BELOW
    assert doubted["answer"].removeprefix(lead).strip() == trusted["answer"].strip()


def test_high_threshold_gives_not_found(ask: Ask, make_context: Callable[..., Context]) -> None:
    state = ask(BREAD_QUESTION, context=make_context(score_threshold=0.99))
    assert state["status"] == "not_found"
    assert state["grounded"] is False
    assert "I don't have information" in state["answer"]
    assert state["citations"] == []
    assert state["retrieved"], "not-found still reports what was retrieved"
    assert "Baking bread" in state["answer"], "the nearest sections are offered"
    # The state's answer (CLI, widget, MCP) says "title — url"; the chat message links each section in Markdown.
    nearest = state["not_found"]["nearest"]
    assert [f"- {s['title']} — {s['source_url']}" for s in nearest] == state["answer"].splitlines()[1:]
    message = state["messages"][-1].text
    assert message.splitlines()[0] == state["answer"].splitlines()[0]
    assert message.splitlines()[1:] == [f"- [{s['title']}]({s['source_url']})" for s in nearest]


def test_a_refused_followup_names_the_question_as_asked(ask: Ask, make_context: Callable[..., Context]) -> None:
    ask(BREAD_QUESTION, "t-follow")
    # "this method" cannot be swapped for a noun: the search appends the earlier question in brackets.
    state = ask("Is this method safe for rye flour?", "t-follow", context=make_context(score_threshold=0.99))
    assert state["status"] == "not_found"
    assert state["retrieval_query"] == "Is this method safe for rye flour? (How long should I knead bread dough)"
    assert state["answer"].startswith("I don't have information about “Is this method safe for rye flour”")
    assert state["messages"][-1].text.startswith("I don't have information about “Is this method safe for rye flour”")


CACHE_PAGE = """# Cache

## Clearing the cache

Run `tool cache clean` to clear the cache. Clearing the cache removes every downloaded package from the cache
directory.

## Cache location

The cache directory is `~/.cache/tool` by default. Set `TOOL_CACHE_DIR` to move the cache somewhere else.
"""


def test_a_followup_searched_with_the_earlier_question_is_answered_for_what_it_asks(
        ask: Ask, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cache-docs").mkdir()
    (tmp_path / "cache-docs" / "cache.md").write_text(CACHE_PAGE)
    ingest_folder(tmp_path / "cache-docs", data_dir=tmp_path / "cache-data", collection="docs",
                  embeddings=HashEmbeddings(256), embedding_model="hash/256", progress=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "cache-data"))
    first = ask("Is there a command that clears the cache directory?", "t-cache")
    assert "tool cache clean" in first["answer"]
    # "it" names nothing in a yes/no question: the search carries the earlier question, the quote must not.
    state = ask("Can I move it somewhere else?", "t-cache")
    assert state["retrieval_query"].endswith("(Is there a command that clears the cache directory)")
    assert state["status"] == "grounded"
    assert "TOOL_CACHE_DIR" in state["answer"]
    assert "tool cache clean" not in state["answer"]


def test_chitchat_does_not_retrieve(ask: Ask) -> None:
    state = ask("hello")
    assert state["status"] == "chitchat"
    assert state["retrieved"] == []
    assert state["citations"] == []
    assert state["retrieval_query"] == ""
    assert state["messages"][-1].text == state["answer"]


def test_chitchat_works_without_an_index(ask: Ask, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "none"))
    state = ask("thanks!", context=Context(embedding_model="hash/256"))
    assert state["status"] == "chitchat"
    assert state["error"] is None


def test_empty_question_is_an_input_error(ask: Ask) -> None:
    state = ask("   ")
    assert state["status"] == "error"
    assert state["error"]["code"] == "INVALID_INPUT"
    assert "INVALID_INPUT" in state["answer"]
    assert "empty" in state["answer"]
    assert state["retrieved"] == []
    # Refused input is answered but not stored: the thread is as it was before the turn.
    assert state["messages"] == [] and state["turns"] == 0


def test_too_long_question_is_an_input_error(ask: Ask) -> None:
    state = ask("why " * 300)
    assert state["error"]["code"] == "INVALID_INPUT"
    assert "too long" in state["answer"]


def test_missing_index_is_reported(ask: Ask, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "empty"))
    ctx = Context(embedding_model="hash/256", score_threshold=0.2)
    state = ask(BREAD_QUESTION, context=ctx)
    assert state["status"] == "error"
    assert state["error"]["code"] == "INDEX_MISSING"
    assert "INDEX_MISSING" in state["answer"]
    assert "ingest" in state["answer"]


def test_other_embedder_than_the_index_is_a_mismatch(ask: Ask, make_context: Callable[..., Context]) -> None:
    state = ask(BREAD_QUESTION, context=make_context(embedding_model="hash/128"))
    assert state["error"]["code"] == "INDEX_MISMATCH"
    assert "hash/256" in state["answer"]


def test_unknown_collection_is_missing(ask: Ask, make_context: Callable[..., Context]) -> None:
    state = ask(BREAD_QUESTION, context=make_context(collection="other"))
    assert state["error"]["code"] == "INDEX_MISSING"


def test_embedder_that_fails_to_load_is_reported(ask: Ask, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "robots"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text about robots.\n")
    ingest_folder(root, data_dir=tmp_path / "local", collection="docs", embeddings=HashEmbeddings(384),
                  embedding_model="local/all-MiniLM-L6-v2", progress=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "local"))
    ctx = Context(embedding_model="local/all-MiniLM-L6-v2")
    state = ask("What about robots?", context=ctx)
    assert state["error"]["code"] == "EMBEDDING_UNAVAILABLE"


def test_collection_missing_from_the_vector_store_is_reported(ask: Ask, data_dir: str) -> None:
    import shutil

    from tools import embedded_index

    shutil.rmtree(embedded_index.root(data_dir, "docs"))
    state = ask(BREAD_QUESTION)
    assert state["status"] == "error"
    assert state["error"]["code"] in {"RETRIEVAL_UNAVAILABLE", "INDEX_MISSING"}


# --- several turns on one thread ------------------------------------------------------------------------


def test_followup_resolves_it_from_previous_turn(ask: Ask) -> None:
    ask("What is Isaac Sim?")
    state = ask("How do I use it for synthetic data?")
    assert state["retrieval_query"] == "How do I use Isaac Sim for synthetic data?"
    assert state["status"] == "grounded"
    assert {c["source"] for c in state["citations"]} == {"isaac-sim.md"}
    assert "Replicator" in state["answer"]
    assert len(state["messages"]) == 4


def test_a_chain_of_followups_stays_on_the_first_topic(ask: Ask) -> None:
    ask("What is Isaac Sim?")
    ask("How do I use it for synthetic data?")
    state = ask("Does it render physically accurate scenes?")
    assert state["retrieval_query"] == "Does Isaac Sim render physically accurate scenes?"


def test_threads_do_not_share_history(ask: Ask) -> None:
    ask("What is Isaac Sim?", thread="one")
    state = ask("How do I use it for synthetic data?", thread="two")
    assert state["retrieval_query"] == "How do I use it for synthetic data?"
    assert len(state["messages"]) == 2


def test_error_turn_does_not_leak_into_next_turn(ask: Ask) -> None:
    assert ask("")["error"]["code"] == "INVALID_INPUT"
    state = ask(BREAD_QUESTION)
    assert state["error"] is None
    assert state["status"] == "grounded"


def test_citations_do_not_leak_into_next_turn(ask: Ask) -> None:
    assert ask(BREAD_QUESTION)["citations"]
    state = ask("hello")
    assert state["status"] == "chitchat"
    assert state["citations"] == []
    assert state["retrieved"] == []
    assert state["top_score"] is None
    assert state["grounded"] is False


def test_threshold_does_not_leak_into_next_turn(ask: Ask) -> None:
    ask(BREAD_QUESTION)
    state = ask("hello")
    assert state.get("threshold") is None


def test_reset_clears_the_conversation(ask: Ask) -> None:
    ask("What is Isaac Sim?")
    state = ask("/reset")
    assert state["status"] == "reset"
    assert state["answer"] == RESET_REPLY
    assert [(type(m), m.content) for m in state["messages"]] == [(AIMessage, RESET_REPLY)]


def test_thread_is_usable_after_reset_and_forgets_the_topic(ask: Ask) -> None:
    ask("What is Isaac Sim?")
    ask("/reset")
    state = ask("How do I use it for synthetic data?")
    assert state["retrieval_query"] == "How do I use it for synthetic data?"
    assert state["status"] in {"grounded", "not_found"}
    assert [type(m) for m in state["messages"]] == [AIMessage, HumanMessage, AIMessage]


def test_ainvoke_answers_like_invoke(app: Any, make_context: Callable[..., Context]) -> None:
    config = {"configurable": {"thread_id": "async"}}
    state = asyncio.run(app.ainvoke({"messages": [HumanMessage(BREAD_QUESTION)]}, config,
                                    context=make_context()))
    assert state["status"] == "grounded"
    assert {c["source"] for c in state["citations"]} == {"baking.md"}


def test_context_may_be_a_plain_dict(app: Any, data_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", data_dir)
    settings = {"embedding_model": "hash/256", "score_threshold": 0.2}
    state = app.invoke({"messages": [HumanMessage(BREAD_QUESTION)]},
                       {"configurable": {"thread_id": "dict"}}, context=settings)
    assert state["status"] == "grounded"


# --- the chat-model path --------------------------------------------------------------------------------

@pytest.fixture
def chat_reply(fake_chat: Callable[..., FakeChat]) -> Callable[[str], FakeChat]:
    """Configure the fake chat model to answer every question with `reply`."""
    return lambda reply: fake_chat(replies=[reply])


def test_llm_answer_keeps_valid_citations_only(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply("Knead the dough for ten minutes [1] [9], as http://evil.example says")
    state = ask(BREAD_QUESTION)
    assert state["status"] == "grounded"
    assert [c["index"] for c in state["citations"]] == [1]
    assert state["citations"][0]["source"] == "baking.md"
    assert "[1]" in state["answer"]
    assert "[9]" not in state["answer"]
    assert "evil.example" not in state["answer"]
    assert "no language model is configured" not in state["answer"]
    assert state["model_used"] == "openai/gpt-4o-mini"
    assert state["messages"][-1].text == state["answer"] + "\n\nSources:\n- [1] [Baking bread](baking.md#baking-bread)"


def test_llm_is_given_the_sources_and_the_question(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    model = chat_reply("Ten minutes [1].")
    ask(BREAD_QUESTION)
    (prompt,) = model.prompts
    user_turn = prompt[-1].content
    assert "Knead the dough for ten minutes" in user_turn
    assert "<source id=1" in user_turn
    assert user_turn.rstrip().endswith(BREAD_QUESTION)


def test_llm_answer_citing_nothing_valid_is_not_found(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply("Bread is great [7].")
    state = ask(BREAD_QUESTION)
    assert state["status"] == "not_found"
    assert state["citations"] == []
    assert "I don't have information" in state["answer"]


def test_llm_not_found_reply_is_not_found(ask: Ask, chat_reply: Callable[[str], FakeChat]) -> None:
    chat_reply("NOT_FOUND")
    state = ask(BREAD_QUESTION)
    assert state["status"] == "not_found"
    assert "NOT_FOUND" not in state["answer"]


def test_llm_failure_is_an_llm_error(ask: Ask, fake_chat: Callable[..., FakeChat]) -> None:
    fake_chat(error=ConnectionError("upstream said: invalid api key sk-secret-123"))
    state = ask(BREAD_QUESTION)
    assert state["status"] == "error"
    assert state["error"]["code"] == "LLM_UNAVAILABLE"
    assert "LLM_UNAVAILABLE" in state["answer"]
    assert "sk-secret" not in state["answer"], "provider details are not shown to the user"
    assert state["messages"][-1].text == state["answer"]


def test_a_turn_embeds_the_question_once(ask: Ask, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = HashEmbeddings.embed_query
    monkeypatch.setattr(HashEmbeddings, "embed_documents", lambda self, texts: calls.extend(texts) or [])
    monkeypatch.setattr(HashEmbeddings, "embed_query",
                        lambda self, text: calls.append(text) or original(self, text))
    state = ask(BREAD_QUESTION)
    assert state["status"] == "grounded"
    assert calls == [BREAD_QUESTION]
