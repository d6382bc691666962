"""The LlamaIndex side-by-side benchmark's helpers; skipped unless the bench extra is installed."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core", reason="llama-index is a bench-only extra: make bench-install")

from llama_index.core import StorageContext, VectorStoreIndex  # noqa: E402
from llama_index.core.chat_engine.condense_plus_context import DEFAULT_CONDENSE_PROMPT_TEMPLATE  # noqa: E402
from llama_index.core.prompts import PromptTemplate  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.embeddings.langchain import LangchainEmbedding  # noqa: E402
from llama_index.vector_stores.qdrant import QdrantVectorStore  # noqa: E402
from qdrant_client import QdrantClient  # noqa: E402

from benchmarks.llamaindex_side_by_side import (  # noqa: E402
    FAKE_ANSWER,
    OfflineLLM,
    fake_completion,
    latency,
    llamaindex_system,
    make_record,
    markdown_table,
    max_abs_diff,
    p50_p95,
    paired_ratio,
    ratio,
    rotate,
    same_top_k,
)
from rag_agent import evaluate  # noqa: E402
from tools.embeddings import HashEmbeddings  # noqa: E402


def test_fake_completion_returns_the_follow_up_of_the_engines_own_condense_prompt() -> None:
    prompt = PromptTemplate(DEFAULT_CONDENSE_PROMPT_TEMPLATE).format(
        chat_history="user: What is Isaac Sim?\nassistant: ...", question="How do I use it for synthetic data?"
    )
    assert fake_completion(prompt) == "How do I use it for synthetic data?"
    assert fake_completion("Context: ...\nAnswer the question.") == FAKE_ANSWER


def test_records_score_with_the_projects_metrics() -> None:
    hit = {"status": "grounded", "retrieval_query": "q",
           "retrieved": [{"chunk_id": "a", "source": "other.md", "score": 0.6},
                         {"chunk_id": "b", "source": "gold.md", "score": 0.5}]}
    abstained = {"status": "not_found", "retrieval_query": "q",
                 "retrieved": [{"chunk_id": "c", "source": "other.md", "score": 0.2}]}
    records = [make_record("t1", 1, {"question": "in", "gold": ["gold.md"]}, hit, 12.345),
               make_record("o1", 1, {"question": "out", "expected": "NOT_FOUND"}, abstained, 10.0)]
    figures = evaluate.metrics(records)
    assert figures["hit_at_5"] == 1.0 and figures["mrr_at_10"] == 0.5
    assert figures["abstention_recall"] == 1.0 and figures["false_abstention_rate"] == 0.0
    assert records[0]["top_score"] == 0.6 and records[0]["latency_ms"] == 12.35


def test_percentiles_follow_the_evaluate_rule_and_ratios_tolerate_gaps() -> None:
    values = [float(v) for v in range(1, 21)]
    figures = evaluate.metrics([{"expected": "NOT_FOUND", "status": "not_found", "turn": 1, "retrieved": [],
                                 "citations": [], "latency_ms": v} for v in values])
    assert p50_p95(values) == (figures["latency_p50_ms"], figures["latency_p95_ms"]) == (10.5, 19.0)
    assert p50_p95([]) == (None, None)
    assert ratio(3.0, 2.0) == 1.5 and ratio(None, 2.0) is None and ratio(1.0, 0.0) is None


def test_latency_and_table_report_overhead_above_the_floor() -> None:
    quality = {"hit_at_5": 1.0, "mrr_at_10": 0.9, "followup_hit_at_5": 1.0, "abstention_recall": 1.0,
               "false_abstention_rate": 0.0}
    project = {"textbook": quality, "ood": {"abstention_recall": 0.9}, "latency": latency([30.0, 30.0], [10.0, 10.0]),
               "session_setup_p50_ms": 0.01}
    llama = {"textbook": quality | {"followup_hit_at_5": 0.5}, "ood": {"abstention_recall": 0.9},
             "latency": latency([20.0, 20.0], [10.0, 10.0]), "session_setup_p50_ms": 5.0}
    assert project["latency"] == {"p50_ms": 30.0, "p95_ms": 30.0, "overhead_p50_ms": 20.0, "turns": 2}
    # Overhead pairs each turn with the floor call beside it: a slow moment slows both and cancels out.
    assert latency([12.0, 50.0, 14.0], [10.0, 45.0, 11.0])["overhead_p50_ms"] == 3.0
    assert paired_ratio([20.0, 90.0, 30.0], [10.0, 60.0, 20.0]) == 1.5 and paired_ratio([1.0], [0.0]) is None
    table = markdown_table({
        "project": project, "llamaindex": llama,
        "floor": latency([10.0], None) | {"embed_p50_ms": 8.0, "search_p50_ms": 2.0},
        "ratios_project_over_llamaindex": {"latency_paired_median": 1.4},
    })
    assert "| textbook follow-up hit@5 | 1.000 | 0.500 | — |" in table
    assert "| time above bare embed+search, median per turn ms | 20.000 | 10.000 | 2.000 |" in table
    assert "| median of per-turn latency ratios (paired) | | | 1.400 |" in table
    assert "(8.000, 2.000)" in table


def test_agreement_vectors_and_rotation() -> None:
    a = [{"turn": t, "retrieved_ids": ids} for t, ids in [(1, ["x", "y"]), (2, ["x"]), (1, [])]]
    b = [{"turn": t, "retrieved_ids": ids} for t, ids in [(1, ["x", "y"]), (2, ["z"]), (1, ["q"])]]
    assert same_top_k(a, b) == (1, 2)
    assert max_abs_diff({"p": [0.5, 1.0]}, {"p": [0.25, 1.0]}) == 0.25
    with pytest.raises(ValueError):
        max_abs_diff({"p": [1.0]}, {"q": [1.0]})
    assert rotate([1, 2, 3], 1) == [2, 3, 1] and rotate([1, 2, 3], 3) == [1, 2, 3] and rotate([], 2) == []


def test_llamaindex_session_records_raw_top_k_and_abstains_below_the_cutoff() -> None:
    texts = {"isaac": "Isaac Sim is a robotics simulator built on Omniverse.",
             "bread": "Bread dough needs flour, water, yeast and salt."}
    nodes = [TextNode(id_=f"00000000-0000-0000-0000-00000000000{i}", text=t, metadata={"source": f"{k}.md"})
             for i, (k, t) in enumerate(texts.items())]
    client = QdrantClient(":memory:")
    # No doc_id payload index: local Qdrant would only warn that it has no effect.
    store = QdrantVectorStore(collection_name="c", client=client, index_doc_id=False)
    index = VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store),
                             embed_model=LangchainEmbedding(HashEmbeddings(64)))
    system = llamaindex_system(index, OfflineLLM(), threshold=0.3)
    session = system.new_session()

    first = system.ask(session, "Isaac Sim is a robotics simulator")
    assert first["status"] == "grounded" and first["retrieved"][0]["source"] == "isaac.md"
    # The stand-in LLM condenses a follow-up to itself, so retrieval sees the raw follow-up.
    follow = system.ask(session, "zzz qqq unrelated words")
    assert follow["retrieval_query"] == "zzz qqq unrelated words"
    # Below the cutoff nothing reaches the answer, yet the raw top-k is still recorded for hit@k.
    assert follow["status"] == "not_found" and len(follow["retrieved"]) == 2
