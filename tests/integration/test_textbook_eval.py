"""Quality on the shared textbook sets with the embedded defaults and the calibrated default threshold."""

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from rag_agent.evaluate import load_jsonl, metrics, run
from rag_agent.service import Agent
from tests.integration.conftest import SHARED


@pytest.fixture(scope="module")
def figures(textbook_dir: Path, monkeypatch_module: pytest.MonkeyPatch) -> dict:
    questions = load_jsonl(SHARED / "textbook" / "textbook-questions.jsonl")
    questions += load_jsonl(SHARED / "ood" / "squad2-ood-questions.jsonl")
    conversations = load_jsonl(SHARED / "textbook" / "textbook-conversations.jsonl")
    agent = Agent(Context(data_dir=str(textbook_dir)), InMemorySaver())
    result = metrics(run(agent, questions, conversations))
    print(result)
    return result


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        for name in ("OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_URL"):
            mp.delenv(name, raising=False)
        yield mp


def test_retrieval_finds_the_gold_chapter(figures: dict) -> None:
    assert figures["hit_at_5"] >= 0.95
    assert figures["followup_hit_at_5"] >= 0.85


def test_gate_abstains_out_of_scope_and_answers_in_scope(figures: dict) -> None:
    assert figures["count_out_of_scope"] == 245
    assert figures["abstention_recall"] >= 0.95
    assert figures["false_abstention_rate"] <= 0.05


def test_every_citation_points_at_a_retrieved_chunk(figures: dict) -> None:
    assert figures["citation_validity"] == 1.0
    assert figures["errors"] == 0
