"""Nearest-section labels name the heading their deep link goes to (issue 25)."""

from __future__ import annotations

from typing import Any

from logic.not_found import hedge, sections


def _chunk(hierarchy: list[str], url: str, score: float) -> Any:
    return {"title": "Basic Isaac Sim Setup", "heading_hierarchy": hierarchy, "source_url": url, "score": score,
            "source": "setup.md", "text": "...", "chunk_id": url}


def test_a_level_three_link_is_labelled_with_its_level_three_heading() -> None:
    found = sections([_chunk(["Installation", "Initial Configuration"], "https://d.example/setup#initial-configuration",
                             0.5),
                      _chunk(["Installation"], "https://d.example/setup#installation", 0.4),
                      _chunk([], "https://d.example/setup", 0.3)])
    assert [(s["title"], s["source_url"].split("/")[-1]) for s in found] == [
        ("Basic Isaac Sim Setup › Initial Configuration", "setup#initial-configuration"),
        ("Basic Isaac Sim Setup › Installation", "setup#installation"),
        ("Basic Isaac Sim Setup", "setup"),
    ]


def test_a_hedge_names_the_ask_not_the_situation_told_before_it() -> None:
    question = ("Last week's gh-deploy pushed a broken build of our docs to GitHub Pages. "
                "Is there a gh-deploy option to roll back to the previous deploy?")
    assert hedge(question) == ("The documentation does not directly answer “Is there a gh-deploy option to roll back "
                               "to the previous deploy”; the closest it comes is:")
    # A long ask is cut at a word, and says so; nothing at all still reads as a sentence.
    long = hedge("Can I " + "really " * 40 + "do it?")
    assert long.count("really") < 40 and "really …”;" in long and len(long) < 260
    assert hedge("   ") == "The documentation does not directly answer this; the closest it comes is:"
