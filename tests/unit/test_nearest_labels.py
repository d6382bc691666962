"""Nearest-section labels name the heading their deep link goes to (issue 25)."""

from __future__ import annotations

from typing import Any

from logic.not_found import sections


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
