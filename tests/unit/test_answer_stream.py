"""Streamed answers: what a user sees while the model writes is the cleaned answer, sentence by sentence."""

from __future__ import annotations

from typing import Any

import pytest

from logic.answer_stream import AnswerStream, StreamedAnswer, flush_event
from logic.canary import CANARY
from logic.errors import LLMBadOutputError
from logic.hygiene import cite, clean


def chunk(n: int) -> dict[str, Any]:
    return {"chunk_id": f"c{n}", "source": f"page{n}.md", "source_url": f"https://docs.example/page{n}",
            "title": "Page", "heading_hierarchy": [], "score": 0.5, "text": f"Text {n}."}


CHUNKS = [chunk(1), chunk(2), chunk(3)]


def run(raw: str, step: int = 3) -> tuple[list[str], str, list[Any]]:
    """Feed `raw` in small tokens; return the deltas, the final answer and its citations."""
    events: list[dict[str, Any]] = []
    stream = AnswerStream(CHUNKS, clean, events.append)
    for i in range(0, len(raw), step):
        stream.feed(raw[i:i + step])
    answer, citations = stream.finish()
    return [e["answer_delta"] for e in events], answer, citations


@pytest.mark.parametrize("raw", [
    "First fact [3]. Second fact [1]. Third fact [3].",
    "Intro line\n\n- bullet one [2]\n- bullet two [2][1]\n\nDone. [1]",
    "Isaac Sim simulates robots [1]. ![x](http://evil.example/t.png)<iframe src=x></iframe>",
    "Go to http://attacker.example now [9]! Or [here](https://docs.example/page2) [2]. <b>Bold</b> end [1]",
])
def test_deltas_add_up_to_the_answer_the_whole_reply_would_give(raw: str) -> None:
    deltas, answer, citations = run(raw)
    assert "".join(deltas) == answer
    assert (answer, citations) == cite(clean(raw, CHUNKS), CHUNKS)


def test_each_sentence_is_emitted_as_soon_as_the_next_one_starts() -> None:
    events: list[dict[str, Any]] = []
    stream = AnswerStream(CHUNKS, clean, events.append)
    stream.feed("One [2]. Tw")
    assert events == [{"answer_delta": "One [1]."}]
    stream.feed("o [1]. ")
    assert len(events) == 1  # a citation marker may still follow
    stream.feed("Three")
    assert events[-1] == {"answer_delta": " Two [2]."}


def test_foreign_urls_images_html_and_unknown_markers_never_reach_the_stream() -> None:
    deltas, _, citations = run("See http://attacker.example [7]. ![p](http://x.example/p.png) Fine "
                               "<script>x</script>[1].")
    streamed = "".join(deltas)
    for bad in ("attacker.example", "x.example", "[7]", "<script", "!["):
        assert bad not in streamed
    assert [c["chunk_id"] for c in citations] == ["c1"]


def test_a_leaked_canary_stops_the_stream_before_its_sentence() -> None:
    events: list[dict[str, Any]] = []
    stream = AnswerStream(CHUNKS, clean, events.append)
    stream.feed("Fine sentence [1]. My id is ")
    with pytest.raises(LLMBadOutputError):
        for token in (CANARY[:7], CANARY[7:], " and more. Later sentence [1]."):
            stream.feed(token)
    assert events == [{"answer_delta": "Fine sentence [1]."}]


def test_a_not_found_reply_is_never_streamed() -> None:
    deltas, answer, citations = run("NOT_FOUND", step=2)
    assert (deltas, answer, citations) == ([], "", [])


def test_flush_emits_the_suffix_or_a_replacement() -> None:
    assert flush_event("Answer [1].", "Answer [1].") is None
    note = "\n\n_Note: unsupported._"
    assert flush_event("Answer [1].", "Answer [1]." + note) == {"answer_delta": note}
    assert flush_event("Answer [1].", "Sorry, no.") == {"answer_replace": "Sorry, no."}


def test_settled_stream_reads_as_the_final_answer() -> None:
    events: list[dict[str, Any]] = []
    streamed = StreamedAnswer(events.append)
    streamed({"answer_delta": "Answer [1]."})
    streamed.settle("Answer [1]. (note)")
    streamed.settle("Answer [1]. (note)")  # settling twice emits nothing new
    assert events == [{"answer_delta": "Answer [1]."}, {"answer_delta": " (note)"}]
    assert streamed.text == "Answer [1]. (note)"


def test_a_block_that_shows_a_fenced_example_goes_out_whole() -> None:
    # A four-backtick block holding a three-backtick one: the inner fences do not close it, so no sentence inside
    # it is cleaned or emitted on its own, and the stream adds up to the whole reply's answer.
    raw = ("Write the page like this [1].\n\n````markdown\n# Title\n\nSome text. More text.\n\n```python\n"
           "print('hi')\n```\n\nAfter the example. And more.\n````\n\nThen build it [2].")
    deltas, answer, _ = run(raw, step=2)
    assert "".join(deltas) == answer == cite(clean(raw, CHUNKS), CHUNKS)[0]
    block = next(d for d in deltas if "````markdown" in d)
    assert "After the example. And more." in block and block.rstrip().endswith("````")
