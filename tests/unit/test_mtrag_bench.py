"""The MTRAG benchmark's helpers score exactly, and its MTRAG-UN replay runs through the graph (hash embedder)."""

import json
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.mtrag_scoring import (
    aggregate,
    hit_at_k,
    normalize_text,
    replay_plan,
    safe_name,
    share,
    split_user_turns,
    token_f1,
)
from graph.context import Context
from rag_agent.service import Agent


def test_normalize_text_drops_case_punctuation_articles_and_extra_spaces() -> None:
    assert normalize_text("The Cat's hat, a  BIG one!") == "cats hat big one"


def test_token_f1_matches_hand_computed_values() -> None:
    # cat sat on mat (4) vs cat sat on red mat (5): 4 shared, P = 1, R = 4/5, F1 = 8/9.
    assert token_f1("the cat sat on the mat", "a cat sat on a red mat") == pytest.approx(8 / 9)
    # A rewrite that adds "in safe room": 5 shared of 8 predicted and 5 reference tokens, F1 = 10/13.
    assert token_f1("What items should I keep in the safe room?", "What items should I keep?") == pytest.approx(10 / 13)
    # Repeated tokens count once per occurrence in both: "is it is" vs "it is" share 2, P = 2/3, R = 1.
    assert token_f1("is it is", "it is") == pytest.approx(0.8)
    assert token_f1("Pollution", "What about pollution?") == pytest.approx(0.5)
    assert token_f1("apples", "oranges") == 0.0


def test_token_f1_follows_squad_for_empty_strings() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("the", "a") == 1.0  # both are empty once articles are dropped
    assert token_f1("", "something") == 0.0
    assert token_f1("something", "") == 0.0


def test_hit_at_k_looks_only_at_the_first_k() -> None:
    retrieved = ["a", "b", "c", "d", "e", "f"]
    assert hit_at_k(retrieved, {"e"}, 5) is True
    assert hit_at_k(retrieved, {"f"}, 5) is False
    assert hit_at_k(retrieved, ["f"], 6) is True
    assert hit_at_k([], {"a"}) is False


def test_share_rounds_and_handles_empty() -> None:
    assert share([True, False, False]) == 0.3333
    assert share([]) is None


def test_aggregate_counts_hits_and_abstentions_per_group() -> None:
    records = [
        {"class": "ANSWERABLE", "turn_type": "Follow-up", "status": "grounded", "hit": True},
        {"class": "ANSWERABLE", "turn_type": "N/A", "status": "not_found", "hit": False},
        {"class": "UNANSWERABLE", "turn_type": "Follow-up", "status": "not_found", "hit": None},
    ]
    assert aggregate(records, "class") == {
        "ANSWERABLE": {"n": 2, "hit_n": 2, "hits": 1, "hit_at_5": 0.5, "abstained": 1, "abstention": 0.5,
                       "errors": 0},
        "UNANSWERABLE": {"n": 1, "hit_n": 0, "hits": 0, "hit_at_5": None, "abstained": 1, "abstention": 1.0,
                         "errors": 0},
    }
    by_type = aggregate(records, "turn_type")
    assert list(by_type) == ["Follow-up", "N/A"]
    assert (by_type["Follow-up"]["n"], by_type["Follow-up"]["hit_at_5"], by_type["Follow-up"]["abstention"]) == (
        2, 1.0, 0.5)
    assert (by_type["N/A"]["hit_at_5"], by_type["N/A"]["abstention"]) == (0.0, 1.0)


def test_safe_name_replaces_unsafe_characters_and_stays_unique_ignoring_case() -> None:
    taken: set[str] = set()
    assert safe_name("806502664_349-964-0-615", taken) == "806502664_349-964-0-615"
    assert safe_name("a/b c", taken) == "a_b_c"
    assert safe_name("A/b c", taken) == "A_b_c_2"
    assert safe_name("...", taken) == "doc"


def test_split_user_turns_strips_the_speaker_prefix() -> None:
    assert split_user_turns('|user|: "What is it?\n|user|: And then?') == ['"What is it?', "And then?"]
    assert split_user_turns("no prefix") == ["no prefix"]


def test_replay_plan_shares_a_thread_when_histories_nest() -> None:
    items = [
        {"id": "c<::>1", "conversation": "c", "history": ["q1"]},
        {"id": "c<::>3", "conversation": "c", "history": ["q1", "q2", "q3"]},
        {"id": "c<::>2", "conversation": "c", "history": ["q1", "other"]},
    ]
    plan, where = replay_plan(items)
    assert plan == {"c": ["q1", "q2", "q3"], "c<::>2": ["q1", "other"]}
    assert where == {"c<::>1": ("c", 1), "c<::>3": ("c", 3), "c<::>2": ("c<::>2", 2)}


def test_mtragun_replays_the_prefix_and_scores_the_final_turn(make_context: Callable[..., Context]) -> None:
    from benchmarks import mtrag

    def task(task_id: str, label: str, turns: list[str], contexts: list[str], turn_type: str) -> dict[str, Any]:
        messages = []
        for text in turns:
            messages += [{"speaker": "user", "text": text}, {"speaker": "agent", "text": "(reply)"}]
        return {"task_id": task_id, "answerability": [label], "Multi-Turn": [turn_type], "Collection": "test",
                "input": messages[:-1], "contexts": [{"document_id": d} for d in contexts]}

    tasks = [
        task("t1", "ANSWERABLE", ["What is Isaac Sim?", "How does it generate synthetic data?"], ["isaac"],
             "Follow-up"),
        task("t2", "UNANSWERABLE", ["What is Isaac Sim?", "Who won the football cup in 1954?"], [], "Follow-up"),
    ]
    result = mtrag.run_mtragun(Agent(make_context(), InMemorySaver()), tasks, {"isaac": "isaac-sim.md"})
    first, second = result["rows"]
    assert first["retrieval_query"] == "How does Isaac Sim generate synthetic data?"  # the graph's own rewrite
    assert first["hit"] is True and first["top_sources"][0] == "isaac-sim.md"
    assert second["hit"] is None
    assert result["agent_turns"] == 4
    assert result["by_class"]["ANSWERABLE"]["hits"] == 1
    assert result["by_turn_type"]["Follow-up"]["n_unanswerable"] == 1


def _write_jsonl(path: Any, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_main_prints_one_json_object_and_a_table(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import mtrag

    data = tmp_path / "mtrag"
    _write_jsonl(data / "mtragun" / "passages.govt-clapnq.jsonl", [
        {"document_id": "d1", "collection": "govt", "text": "Isaac Sim\nIsaac Sim is a robot simulator."},
        {"document_id": "d2", "collection": "govt", "text": "Baking bread\nBread dough needs flour, water and yeast."},
        {"document_id": "d/3", "collection": "clapnq", "text": "Synthetic data\nReplicator makes synthetic data."},
    ])
    _write_jsonl(data / "mtragun" / "reference.govt-clapnq.jsonl", [
        {"task_id": "t1", "answerability": ["ANSWERABLE"], "Multi-Turn": ["N/A"], "Collection": "govt",
         "input": [{"speaker": "user", "text": "What is Isaac Sim?"}], "contexts": [{"document_id": "d1"}]},
    ])
    for name in ("govt", "clapnq"):
        folder = data / "rewrites" / name
        first, follow = "What is Isaac Sim?", "How does it make synthetic data?"
        _write_jsonl(folder / f"{name}_questions.jsonl", [
            {"_id": "c<::>1", "text": f"|user|: {first}"},
            {"_id": "c<::>2", "text": f"|user|: {first}\n|user|: {follow}"}])
        _write_jsonl(folder / f"{name}_lastturn.jsonl", [
            {"_id": "c<::>1", "text": f"|user|: {first}"}, {"_id": "c<::>2", "text": f"|user|: {follow}"}])
        _write_jsonl(folder / f"{name}_rewrite.jsonl", [
            {"_id": "c<::>1", "text": f"|user|: {first}"},
            {"_id": "c<::>2", "text": "|user|: How does Isaac Sim make synthetic data?"}])
        (folder / "qrels").mkdir()
        (folder / "qrels" / "dev.tsv").write_text(
            "query-id\tcorpus-id\tscore\nc<::>1\td1\t1\nc<::>2\td/3\t1\nc<::>2\tnot-in-pool\t1\n")
    argv = ["--data", str(data), "--embedding-model", "hash/256", "--threads", "0"]
    assert mtrag.main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["index"]["passages"] == 3
    assert result["mtragun"]["by_class"]["ANSWERABLE"]["hits"] == 1
    summary = result["rewrites"]["summary"]["all"]
    assert (summary["followups"], summary["agent_rewrote"], summary["f1_agent"]) == (2, 2, 1.0)
    assert summary["f1_last_turn"] == pytest.approx(10 / 13, abs=1e-4)
    assert (summary["qrels_rows"], summary["qrels_rows_in_pool"], summary["followups_covered"]) == (6, 4, 2)
    assert summary["hit_at_5_on"] == 1.0
    assert mtrag.main(argv) == 0
    table = capsys.readouterr().out
    assert "| ANSWERABLE | 1 | 100.0% (1/1) |" in table and "cpu" in table.lower()
