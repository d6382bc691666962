"""Figures judged by answer keywords: passage hit@k, follow-up turns right, keyword calibration."""

import pytest

from rag_agent.evaluation import figures as eval_figures
from rag_agent.evaluation import passages as eval_passages


def record(**values: object) -> dict:
    """A turn record as rag_agent/evaluation/evaluate.py writes it, with only what these figures read."""
    base = {"expected": "GROUNDED", "status": "grounded", "answer": "", "answer_keywords": [], "turn": 1,
            "retrieved_ids": [], "confidence": 0.5}
    return {**base, **values}


@pytest.mark.parametrize(("text", "keywords", "held"), [
    ("Set `extra='forbid'` on the model.", ["extra", "forbid"], True),
    ("Set extra on the model.", ["extra", "forbid"], True),  # 1 of 2 is half
    ("Pass model_dump.", ["model_dump_json", "JSON-encoded string", "bytes"], False),  # 1 of 3 is under half
    ("MODEL_DUMP_JSON returns a json-encoded string", ["model_dump_json", "JSON-encoded string", "x"], True),
    ("anything", [], False),
])
def test_holds_needs_half_the_keywords_rounded_up(text: str, keywords: list[str], held: bool) -> None:
    assert eval_passages.holds(text, keywords) is held


def test_passage_hit_looks_at_the_chunk_text_not_its_page() -> None:
    texts = {"a": "Models are classes.", "b": "Use extra='forbid' to refuse unknown keys.", "c": "About extra."}
    right_page_wrong_passage = record(answer_keywords=["forbid", "extra"], retrieved_ids=["a", "c"])
    found_second = record(answer_keywords=["forbid", "unknown keys"], retrieved_ids=["a", "b"])
    never = record(answer_keywords=["forbid", "unknown keys"], retrieved_ids=["a"])
    out_of_scope = record(expected="NOT_FOUND", retrieved_ids=["b"])
    figures = eval_passages.passage_hits([right_page_wrong_passage, found_second, never, out_of_scope], texts)
    assert eval_passages.passage_rank(found_second, texts) == 2
    assert eval_passages.passage_rank(right_page_wrong_passage, texts) == 2  # "extra" alone is half of two
    assert figures == {"passage_hit_at_1": 0.0, "passage_hit_at_5": round(2 / 3, 4), "count_passage_judged": 3}


def test_a_followup_is_right_by_its_status_and_its_answer_keywords() -> None:
    turns = [
        record(turn=1, answer="model_dump", answer_keywords=["model_dump"]),  # first turns are not follow-ups
        record(turn=2, answer="Pass exclude_none=True.", answer_keywords=["exclude_none"]),
        record(turn=3, answer="Fields are validated.", answer_keywords=["exclude_unset", "model_fields_set"]),
        record(turn=2, status="not_found", answer="I don't have information", answer_keywords=["exclude_none"]),
        record(turn=3, expected="NOT_FOUND", status="not_found"),
        record(turn=4, expected="NOT_FOUND", status="grounded", answer="Something."),
        record(turn=2, answer="No keywords to check."),
    ]
    figures = eval_figures.followups(turns)
    right = (figures["followups_right"], figures["count_followup_turns"], figures["followups_right_share"])
    assert right == (3, 6, 0.5)


def test_keyword_calibration_judges_answers_by_what_they_hold() -> None:
    turns = [
        record(confidence=0.95, answer="Use extra='forbid'.", answer_keywords=["forbid"]),
        record(confidence=0.95, answer="Models are classes.", answer_keywords=["forbid"]),  # sure and wrong
        record(confidence=0.92, expected="NOT_FOUND", answer="Something invented."),  # an answered near miss
        record(confidence=0.15, answer="Use extra='forbid'.", answer_keywords=["forbid"]),
        record(confidence=0.05, status="not_found", answer_keywords=["forbid"]),  # refusals are not answers
        record(confidence=0.99, answer="No keywords: cannot be judged."),
    ]
    figures = eval_passages.keyword_calibration(turns)
    assert figures["count_judged_answers"] == 4
    assert (figures["high_confidence_holding"], figures["count_high_confidence"]) == (round(1 / 3, 4), 3)
    # bin 0.9-1.0: 3 answers at mean 0.94, 1/3 right; bin 0.1-0.2: 1 answer at 0.15, right.
    assert figures["keyword_ece"] == pytest.approx((3 * abs(1 / 3 - 0.94) + abs(1 - 0.15)) / 4, abs=1e-4)
    assert [row["count"] for row in figures["keyword_reliability"]] == [1, 3]


def test_a_missed_answer_is_placed_where_its_passage_was() -> None:
    texts = {"a": "Models are classes.", "b": "Use extra='forbid' to refuse unknown keys.", "c": "Extra fields."}
    keys = ["forbid"]
    turns = [
        record(answer="Models are classes. [1]", answer_keywords=keys, retrieved_ids=["a", "c"],
               citations=[{"chunk_id": "a"}]),  # no retrieved chunk says it
        record(answer="Extra fields. [1]", answer_keywords=keys, retrieved_ids=["c", "b"],
               citations=[{"chunk_id": "c"}]),  # the second chunk says it, the answer quotes the first
        record(answer="Use extra to refuse unknown keys. [1]", answer_keywords=keys, retrieved_ids=["b"],
               citations=[{"chunk_id": "b"}]),  # quoted the right chunk, not its line (hypothetically cut)
        record(answer="Use extra='forbid'. [1]", answer_keywords=keys, retrieved_ids=["b"],
               citations=[{"chunk_id": "b"}]),  # holds: not a miss
        record(status="not_found", answer_keywords=keys, retrieved_ids=["b"]),  # a refusal is not an answer
    ]
    assert eval_passages.missed_passages(turns, texts) == {
        "misses_not_retrieved": 1, "misses_not_quoted": 1, "misses_other_part": 1}
