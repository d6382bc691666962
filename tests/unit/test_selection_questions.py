"""Questions about a selection itself ("summarize this", "explain the code here") are judged by what they ask for."""

from __future__ import annotations

from logic import lexical
from logic.selection import ABOUT_SELECTION_COVERAGE, about_selection, outline_parts, points_at_selection, sums_up
from logic.types import Chunk

PARTS = ["DDS is the middleware ROS 2 uses for discovery and transport.",
         "Quality of Service settings tune reliability and durability.",
         "```python\nclass FibonacciActionServer(Node):\n    pass\n```"]


def chunks() -> list[Chunk]:
    return [{"chunk_id": f"selection-{i}", "source": "selection", "source_url": f"selection#part-{i}",
             "title": "Your selection", "heading_hierarchy": ["Action servers" if i == 2 else "Middleware"],
             "score": 0.1, "text": text} for i, text in enumerate(PARTS)]


def judged(question: str) -> dict:
    hits = chunks()
    lexicon = lexical.build(" ".join([*c["heading_hierarchy"], c["text"]]) for c in hits)
    return about_selection(question, hits, lexicon, 5)


def test_pointing_questions_are_recognised() -> None:
    assert points_at_selection("Summarize this page.") and points_at_selection("Explain the code here")
    assert not points_at_selection("How do I configure costmap inflation in Nav2?")


def test_summarize_and_explain_are_answered_from_the_selection() -> None:
    # "rules" and "details" name the kind of text asked for, like "code": the page need not use the word.
    for question in ("Summarize this page.", "Explain the action server code in this selection.",
                     "Explain the reliability rules described here.", "What details does this give on durability?"):
        result = judged(question)
        assert result["gate_score"] >= result["threshold"] == ABOUT_SELECTION_COVERAGE, question


def test_pointing_at_the_selection_for_what_it_never_says_is_refused() -> None:
    result = judged("How do I switch these DDS vendors to Cyclone with Zenoh bridging?")
    assert result["gate_score"] < result["threshold"]


def test_asking_for_the_gist_is_told_from_asking_about_a_topic_in_it() -> None:
    assert sums_up("Summarize this.") and sums_up("Give me an overview of this page") and sums_up("tldr")
    assert sums_up("Summarize the advice on this page.")  # "advice" names the kind of text, not a fact in it
    assert not sums_up("Summarize what this page says about hosting on Read the Docs.")
    assert not sums_up("Explain the code here") and not sums_up("List the steps described here")


def test_a_summary_reads_each_sections_first_part_top_level_sections_first() -> None:
    paths = [["Intro"], ["Intro"], ["Setup"], ["Setup", "Docker"], ["Setup", "Docker"], ["Setup", "Pip"], ["Usage"]]
    hits: list[Chunk] = [{"chunk_id": f"selection-{i}", "source": "selection", "source_url": f"selection#part-{i}",
                          "title": "Your selection", "heading_hierarchy": path, "score": 0.0, "text": f"part {i}"}
                         for i, path in enumerate(paths, start=1)]
    assert [c["text"] for c in outline_parts(hits, 4)] == ["part 1", "part 3", "part 4", "part 7"]
    assert [c["text"] for c in outline_parts(hits, 6)] == ["part 1", "part 2", "part 3", "part 4", "part 6", "part 7"]
    assert [c["text"] for c in judged("Summarize this page.")["retrieved"]] == PARTS


def test_a_question_about_the_selection_ranks_its_parts_by_what_it_asks_not_by_its_pointer_words() -> None:
    parts = [("This selection explains the code of the DDS middleware layer.", 0.35),
             ("The action server below counts Fibonacci numbers.\n\n```python\nclass Counter(Node): ...\n```", 0.3)]
    hits: list[Chunk] = [{"chunk_id": f"selection-{i}", "source": "selection", "source_url": f"selection#part-{i}",
                          "title": "Your selection", "heading_hierarchy": [f"Example {i}"], "score": score,
                          "text": text}
                         for i, (text, score) in enumerate(parts, start=1)]
    lexicon = lexical.build(" ".join([*c["heading_hierarchy"], c["text"]]) for c in hits)
    ranked = about_selection("Explain the action server code in this selection.", hits, lexicon, 5)["retrieved"]
    assert ranked[0]["text"].startswith("The action server below")
