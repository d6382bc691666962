"""Scoping a turn: metadata filters, a user-provided selection, abstentions that say why, the retrieval cache."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import nodes.classify
import nodes.generate_grounded
from graph.builder import compile_graph
from graph.context import Context
from logic.validation import MAX_SELECTION_CHARS
from nodes.classify import Rewrite
from rag_agent.cli.commands import main
from rag_agent.service import Agent
from tests.fakes import FakeChat
from tests.tiny_corpus import BAKING_MD, ISAAC_SIM_MD
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder
from tools.settings import get_settings

ISAAC_QUESTION = "How does Isaac Sim generate synthetic data?"
BREAD_QUESTION = "How long should I knead bread dough?"
KINEMATICS = """\
Forward kinematics computes where a robot arm's end effector ends up from its joint angles.
Inverse kinematics works the other way: given a desired end effector pose, it solves for joint angles.
A Jacobian matrix relates joint velocities to end effector velocities.
"""
KINEMATICS_QUESTION = "What does inverse kinematics solve for, given an end effector pose?"
BITCOIN_QUESTION = "How is a Bitcoin block mined?"


def index(root: Path, data: Path, pages: dict[str, str]) -> None:
    """Write pages under `root` and ingest them with the hash embedder."""
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    ingest_folder(root, data_dir=data, collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Context:
    """An index with two modules: robots/ (Isaac Sim) and kitchen/ (bread)."""
    index(tmp_path / "docs", tmp_path / "data", {"robots/isaac-sim.md": ISAAC_SIM_MD, "kitchen/baking.md": BAKING_MD})
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
    return Context(embedding_model="hash/256", score_threshold=0.2)


@pytest.fixture
def agent(modules: Context) -> Agent:
    return Agent(modules, checkpointer=InMemorySaver())


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every query the embedder is asked to embed."""
    calls: list[str] = []
    original = HashEmbeddings.embed_query
    monkeypatch.setattr(HashEmbeddings, "embed_query", lambda self, text: calls.append(text) or original(self, text))
    return calls


# --- metadata filters -----------------------------------------------------------------------------------


def test_module_filter_restricts_citations(agent: Agent) -> None:
    out = agent.ask(ISAAC_QUESTION, "t1", filters={"module": "robots"})
    assert out["status"] == "grounded"
    assert {c["source"] for c in out["citations"]} == {"robots/isaac-sim.md"}
    assert {c["source"] for c in out["retrieved"]} == {"robots/isaac-sim.md"}


@pytest.mark.parametrize("filters", [{"source": "kitchen/"}, {"chapter": "kitchen/baking"}])
def test_source_prefix_and_chapter_filters(agent: Agent, filters: dict[str, str]) -> None:
    out = agent.ask("What is Isaac Sim and how does it render scenes?", "t1", filters=filters)
    assert {c["source"] for c in out["retrieved"]} == {"kitchen/baking.md"}


def test_answer_outside_the_filter_names_where_it_is(agent: Agent) -> None:
    out = agent.ask(BREAD_QUESTION, "t1", filters={"module": "robots"})
    assert out["status"] == "not_found"
    assert out["citations"] == []
    assert out["not_found"]["reason"] == "filtered_out"
    assert "in robots; kitchen covers it" in out["answer"]
    assert out["not_found"]["nearest"][0]["source_url"].startswith("kitchen/baking.md")
    assert out["not_found"]["nearest"][0]["source_url"] in out["answer"]


def test_unknown_module_is_an_input_error_before_embedding(agent: Agent, embedded: list[str]) -> None:
    out = agent.ask(ISAAC_QUESTION, "t1", filters={"module": "nope"})
    assert out["status"] == "error"
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "'nope'" in out["error"]["message"] and "kitchen, robots" in out["error"]["message"]
    assert embedded == []


def test_unknown_filter_key_names_the_known_keys(agent: Agent) -> None:
    out = agent.ask(ISAAC_QUESTION, "t1", filters={"colour": "red"})
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "'colour'" in out["error"]["message"] and "module, chapter, source" in out["error"]["message"]


def test_filters_that_exclude_each_other_are_an_input_error(agent: Agent) -> None:
    out = agent.ask(ISAAC_QUESTION, "t1", filters={"module": "robots", "chapter": "kitchen/baking"})
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "no indexed page matches all of the filters" in out["error"]["message"]


def test_filters_apply_only_to_the_call_that_sends_them(agent: Agent) -> None:
    agent.ask(ISAAC_QUESTION, "t1", filters={"module": "robots"})
    out = agent.ask(BREAD_QUESTION, "t1")
    assert out["status"] == "grounded"
    assert {c["source"] for c in out["citations"]} == {"kitchen/baking.md"}


# --- user-provided context ------------------------------------------------------------------------------


def test_selection_answers_and_cites_only_the_selection(agent: Agent) -> None:
    out = agent.ask(KINEMATICS_QUESTION, "t1", context=KINEMATICS)
    assert out["status"] == "grounded"
    assert out["citations"]
    assert {c["source"] for c in out["citations"]} == {"selection"}
    assert {c["source_url"] for c in out["citations"]} == {"selection#part-1"}
    assert out["citations"][0]["title"] == "Your selection"
    assert "joint angles" in out["answer"]
    assert "Quoted from your selection" in out["answer"]


def test_a_summary_of_a_selection_skims_all_its_sections(agent: Agent) -> None:
    sections = ["Forward kinematics", "Inverse kinematics", "Jacobians", "Singularities", "Trajectories"]
    detail = " ".join(["and more about it"] * 6)
    page = "\n\n".join(f"## {name}\n\n{name} is topic number {n} of this note. More detail on {name.lower()} "
                       f"follows here, {detail}." for n, name in enumerate(sections, start=1))
    out = agent.ask("Summarize this page.", "t1", context=page)
    assert out["status"] == "grounded"
    for n, name in enumerate(sections, start=1):
        assert f"**{name}**: {name} is topic number {n} of this note." in out["answer"]
    # Every section's opening first; the words left go to the rest of the first sections, not of the last.
    assert "More detail on forward kinematics" in out["answer"] and "More detail on trajectories" not in out["answer"]
    assert len(out["citations"]) == len(sections)


def test_selection_refuses_an_off_topic_question(agent: Agent) -> None:
    out = agent.ask(BITCOIN_QUESTION, "t1", context=KINEMATICS)
    assert out["status"] == "not_found"
    assert out["citations"] == []
    assert "in your selection" in out["answer"]
    assert out["not_found"]["reason"] == "below_threshold"


def test_selection_is_used_instead_of_the_index(agent: Agent) -> None:
    out = agent.ask(BREAD_QUESTION, "t1", context=KINEMATICS)
    assert out["status"] == "not_found", "the index covers bread, the selection does not"
    assert all(c["source"] == "selection" for c in out["retrieved"])


def test_selection_works_without_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "none"))
    ctx = Context(embedding_model="hash/256", score_threshold=0.2)
    out = Agent(ctx, checkpointer=InMemorySaver()).ask(KINEMATICS_QUESTION, "t1", context=KINEMATICS)
    assert out["status"] == "grounded"


def test_next_call_without_a_selection_uses_the_index(agent: Agent) -> None:
    agent.ask(KINEMATICS_QUESTION, "t1", context=KINEMATICS)
    out = agent.ask(BREAD_QUESTION, "t1")
    assert {c["source"] for c in out["citations"]} == {"kitchen/baking.md"}


@pytest.mark.parametrize(("selection", "filters", "expected"), [
    ("x" * (MAX_SELECTION_CHARS + 1), None, "too long"),
    ("   ", None, "empty"),
    (KINEMATICS, {"module": "robots"}, "cannot be combined"),
])
def test_bad_selection_is_an_input_error(agent: Agent, embedded: list[str], selection: str,
                                         filters: dict[str, str] | None, expected: str) -> None:
    out = agent.ask(KINEMATICS_QUESTION, "t1", context=selection, filters=filters)
    assert out["error"]["code"] == "INVALID_INPUT"
    assert expected in out["error"]["message"]
    assert embedded == []


def test_selection_is_cleaned_of_invisible_characters(modules: Context) -> None:
    app = compile_graph(InMemorySaver())
    state = app.invoke({"messages": [HumanMessage(KINEMATICS_QUESTION)], "context": "Inverse\u200b kinematics\x1b[31m"},
                       {"configurable": {"thread_id": "t"}}, context=modules)
    assert state["selection"] == "Inverse kinematics"


# --- abstentions that explain themselves ----------------------------------------------------------------


def test_below_threshold_keeps_scores_in_fields_and_links_nearest_sections(agent: Agent, modules: Context) -> None:
    strict = Agent(Context(**{**vars(modules), "score_threshold": 0.99}), checkpointer=InMemorySaver())
    out = strict.ask(BREAD_QUESTION, "t1")
    found = out["not_found"]
    assert found["reason"] == "below_threshold"
    assert found["threshold"] == 0.99 and found["best_score"] == pytest.approx(out["gate_score"], abs=1e-3)
    assert found["nearest"][0]["source_url"] == "kitchen/baking.md#baking-bread"
    assert "0.99" not in out["answer"] and f"{out['gate_score']:.2f}" not in out["answer"]
    assert "kitchen/baking.md#baking-bread" in out["answer"]


def test_grounded_answer_has_no_not_found(agent: Agent) -> None:
    assert agent.ask(BREAD_QUESTION, "t1")["not_found"] is None


def test_answer_without_valid_citation_is_unsupported(agent: Agent, fake_chat: Callable[..., FakeChat]) -> None:
    fake_chat(replies=["Bread is great [7]."])
    out = agent.ask(BREAD_QUESTION, "t1")
    assert out["status"] == "not_found"
    assert out["not_found"]["reason"] == "unsupported"
    assert "do not support an answer" in out["answer"]


def test_out_of_scope_intent_is_declined_without_retrieval(agent: Agent, monkeypatch: pytest.MonkeyPatch,
                                                           embedded: list[str]) -> None:
    agent.ask(ISAAC_QUESTION, "t1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setattr(nodes.classify, "llm_rewrite",
                        lambda history, text, ctx: Rewrite(intent="out_of_scope", standalone_query="weather today"))
    embedded.clear()
    out = agent.ask("and the weather there today?", "t1")
    assert out["status"] == "not_found"
    assert out["not_found"]["reason"] == "out_of_scope_intent"
    assert out["retrieved"] == [] and embedded == []
    assert "I don't have information about “weather today”" in out["answer"]


# --- per-session retrieval cache ------------------------------------------------------------------------


def test_repeated_question_on_a_thread_reuses_retrieval(agent: Agent, embedded: list[str]) -> None:
    first = agent.ask(BREAD_QUESTION, "t1")
    second = agent.ask(BREAD_QUESTION, "t1")
    assert embedded == [BREAD_QUESTION]
    assert (first["retrieval_cached"], second["retrieval_cached"]) == (False, True)
    assert second["citations"] == first["citations"] and second["status"] == "grounded"


def test_another_thread_or_filter_retrieves_again(agent: Agent, embedded: list[str]) -> None:
    agent.ask(BREAD_QUESTION, "t1")
    assert agent.ask(BREAD_QUESTION, "t2")["retrieval_cached"] is False
    assert agent.ask(BREAD_QUESTION, "t1", filters={"module": "kitchen"})["retrieval_cached"] is False
    assert embedded == [BREAD_QUESTION] * 3


def test_reingest_that_changes_the_index_invalidates_the_cache(agent: Agent, modules: Context, tmp_path: Path,
                                                               embedded: list[str]) -> None:
    agent.ask(BREAD_QUESTION, "t1")
    index(tmp_path / "docs", tmp_path / "data", {})  # nothing changed: the cache stays valid
    assert agent.ask(BREAD_QUESTION, "t1")["retrieval_cached"] is True
    index(tmp_path / "docs", tmp_path / "data", {"kitchen/pastry.md": "# Pastry\n\nKnead bread dough gently.\n"})
    out = agent.ask(BREAD_QUESTION, "t1")
    assert out["retrieval_cached"] is False
    assert embedded.count(BREAD_QUESTION) == 2
    assert "kitchen/pastry.md" in {c["source"] for c in out["retrieved"]}


def test_a_message_is_kept_once_per_turn_with_the_cache(agent: Agent, modules: Context) -> None:
    agent.ask(BREAD_QUESTION, "t1")
    agent.ask(BREAD_QUESTION, "t1")
    state = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).values
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage] * 2


# --- the command line -----------------------------------------------------------------------------------


@pytest.fixture
def cli(modules: Context, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """Run `rag-agent ask --json` over the two-module index; return (exit code, response or stderr)."""
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", "memory")

    def run(*args: str) -> tuple[int, Any]:
        code = main(["--data-dir", get_settings().data_dir, "ask", "--json", "--threshold", "0.2", *args])
        out, err = capsys.readouterr()
        return code, json.loads(out) if out else err

    return run


def test_cli_reads_the_selection_from_stdin(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(KINEMATICS))
    code, out = cli("--context", "-", KINEMATICS_QUESTION)
    assert code == 0 and out["status"] == "grounded"
    assert {c["source"] for c in out["citations"]} == {"selection"}


def test_cli_filter_flags(cli: Any) -> None:
    code, out = cli("--filter", "module=kitchen", BREAD_QUESTION)
    assert code == 0 and {c["source"] for c in out["citations"]} == {"kitchen/baking.md"}
    code, err = cli("--filter", "module", BREAD_QUESTION)
    assert code == 2 and "KEY=VALUE" in err


def test_cli_unreadable_selection_exits_2(cli: Any, tmp_path: Path) -> None:
    code, err = cli("--context", str(tmp_path / "missing.txt"), BREAD_QUESTION)
    assert code == 2 and "missing.txt" in err


# --- section filter -------------------------------------------------------------------------------------


def test_section_filter_keeps_to_the_chunks_under_a_heading(agent: Agent) -> None:
    out = agent.ask("What does Isaac Sim do?", "t1", filters={"section": "synthetic DATA"})
    assert out["status"] == "grounded", out["answer"]
    assert out["citations"] and all("Synthetic data" in c["heading_hierarchy"] for c in out["citations"])
    # Only the section's chunks were candidates; without the filter the page's other section is found too.
    unfiltered = agent.ask("What does Isaac Sim do?", "t2")
    assert len(out["retrieved"]) < len(unfiltered["retrieved"])


def test_unknown_section_is_refused_with_the_closest_headings(agent: Agent, embedded: list[str]) -> None:
    out = agent.ask(ISAAC_QUESTION, "t1", filters={"section": "Synthetic dta"})
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "unknown section 'Synthetic dta'" in out["error"]["message"]
    assert "closest sections: Synthetic data" in out["error"]["message"]
    assert embedded == []  # refused before anything was embedded
