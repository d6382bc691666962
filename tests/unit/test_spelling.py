"""A typo is corrected to the documentation's own word; names, English words and code never are."""

from __future__ import annotations

from logic.spelling import corrected

# Chunks using each term, as an index's lexicon counts them (terms are singularised).
DF = {"publish": 12, "crate": 40, "change": 30, "favicon": 4, "search": 25, "plugin": 18, "generate": 9,
      "json": 50, "schema": 33, "model": 120, "mode": 7, "validate": 15, "stack": 6, "serve": 11, "local": 8,
      "setting": 22, "once": 2, "older": 9, "real": 14}
ENGLISH = frozenset({"stick", "servo", "local", "people", "change", "publish", "model"})


def test_a_dropped_doubled_or_swapped_letter_is_corrected_to_the_docs_word() -> None:
    assert corrected("how do i pubish my crate?", DF, ENGLISH) == "how do i publish my crate?"
    assert corrected("how do i chnage the favicon", DF, ENGLISH) == "how do i change the favicon"
    assert corrected("now serch stopped working", DF, ENGLISH) == "now search stopped working"
    assert corrected("how to genrate json schema from a modle", DF, ENGLISH) == \
        "how to generate json schema from a model"  # "modle" is nearer "model" and "mode": the commoner wins
    assert corrected("validatte the input", DF, ENGLISH) == "validate the input"


def test_a_part_of_a_snake_case_name_is_corrected_in_prose_but_not_in_code() -> None:
    df = {**DF, "before": 20, "request": 40}
    assert corrected("in a befor_request hook", df, ENGLISH) == "in a before_request hook"
    assert corrected("`befor_request`, befor_request.py", df, ENGLISH) == "`befor_request`, befor_request.py"


def test_english_words_names_and_code_are_left_alone() -> None:
    for question in ("Give people the built site on a USB stick",  # English, though the docs say "stack"
                     "How do I control Dynamixel servos?",  # "servo" is English: not "serves"
                     "What's new in Zenoh?",  # a name the docs lack is what the gate must see
                     "Set `stak` in mkdocs.yml",  # code is quoted as written
                     "Run setings.py", "the --serch flag",
                     "Does it use the locale?",  # "local" + e is a word of its own
                     "what is a polder?",  # not "older": a first letter is rarely the one mistyped
                     "was it realy"):  # nor "real": a dropped last letter makes another word
        assert corrected(question, DF, ENGLISH) == question


def test_a_word_the_docs_use_rarely_or_short_words_are_not_targets() -> None:
    assert corrected("what happens onse", DF, ENGLISH) == "what happens onse"  # "once": in 2 chunks only
    assert corrected("hwo to", DF, ENGLISH) == "hwo to"  # under five letters: too many neighbours
    assert corrected("anything", {}, ENGLISH) == "anything"  # no lexicon (an empty index): nothing to correct
