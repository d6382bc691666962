"""What the reading model is shown: a section cut into short passages, each headed by its section."""

from __future__ import annotations

from logic import answerability
from logic.passages import units
from logic.reading import READ_PASSAGES, WINDOW_WORDS, chosen, heading_of, passages, windows
from logic.types import Chunk

SECTION = """## Installing

Run the installer from a terminal. It needs no administrator rights and takes a minute.

To install on Linux, run:

```bash
curl -sSf https://example.org/install.sh | sh
```

""" + " ".join(f"Sentence number {n} says something about the cache directory." for n in range(12)) + "\n"


def _chunk(text: str, title: str = "Getting started", headings: list[str] | None = None) -> Chunk:
    return {"chunk_id": "c1", "source": "start.md", "source_url": "", "title": title,
            "heading_hierarchy": headings or [], "score": 0.5, "text": text}


def test_passages_keep_paragraphs_apart_and_blocks_with_their_lead() -> None:
    cut = passages(SECTION, "Getting started > Installing")
    assert cut[0].text.startswith("Getting started > Installing: Run the installer")
    # The command is read with the sentence that introduces it, not with the paragraph before.
    assert any("To install on Linux, run:" in p.text and "curl -sSf" in p.text for p in cut)
    assert not any("administrator" in p.text and "curl" in p.text for p in cut)


def test_a_long_paragraph_is_read_in_windows_that_cover_it() -> None:
    found = units(SECTION)
    cut = windows(found, "")
    long = [p for p in cut if "cache directory" in p.text]
    assert len(long) >= 2
    assert all(len(p.text.split()) <= WINDOW_WORDS + 12 for p in long)  # a window may end on a whole sentence
    covered = sorted(k for p in cut for k in p.unit_positions)
    assert covered == list(range(len(found)))  # every unit is read in exactly one window


def test_heading_is_the_page_title_and_innermost_heading_in_plain_words() -> None:
    assert heading_of(_chunk("x", "Configuration", ["Options", "**site_url**"])) == "Configuration > site_url"
    assert heading_of(_chunk("x", "FAQ", ["FAQ"])) == "FAQ"


def test_the_embedders_favourite_passages_are_read_first() -> None:
    assert chosen([0.1, 0.9, 0.5, 0.7, 0.2, 0.8]) == [1, 5, 3, 2][:READ_PASSAGES]


def test_the_verdict_can_veto_an_answer_but_never_force_one() -> None:
    base = {"cosine": 0.45, "coverage": 0.4, "names_missing": 0.0, "unknown": 0.0, "off_topic": 0.0,
            "type_missing": 0.0}
    threshold = answerability.THRESHOLD
    assert answerability.gate_score(base) >= threshold and answerability.worth_reading(base, threshold)
    # "It answers" leaves the score as the gate had it; "it does not" lowers it below the threshold.
    assert answerability.gate_score(answerability.with_reading(base, 0.99)) == answerability.gate_score(base)
    assert answerability.gate_score(answerability.with_reading(base, 0.001)) < threshold
    # Lower verdicts lower the score more, down to the clip.
    scores = [answerability.gate_score(answerability.with_reading(base, p)) for p in (0.2, 0.05, 0.01, 1e-9)]
    assert scores == sorted(scores, reverse=True) and scores[-1] == answerability.gate_score(
        answerability.with_reading(base, 0.0))
    # Where the verdict could change nothing the passages are not read: refused already, or answered whatever.
    refused = {**base, "cosine": 0.05, "coverage": 0.0}
    sure = {**base, "cosine": 0.95, "coverage": 1.0}
    assert not answerability.worth_reading(refused, threshold) and not answerability.worth_reading(sure, threshold)
    assert not answerability.worth_reading({**base, "type_missing": 1.0}, threshold)  # an asked value missing
