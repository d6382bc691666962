"""Answer hygiene keeps code blocks as written while cleaning the prose around them."""

from __future__ import annotations

from logic.hygiene import cite, clean
from logic.types import Chunk

CHUNK: Chunk = {"chunk_id": "c1", "source": "urdf.md", "source_url": "https://docs.example/urdf", "title": "URDF",
                "heading_hierarchy": [], "score": 0.5, "text": "<link name=\"base\"/>"}
CODE = "```xml\n<link name=\"base\">\n  <visual>\n    <box size=\"1 1 1\"/>\n  </visual>\n</link>\n```"


def test_tags_and_indentation_inside_code_fences_survive_cleaning() -> None:
    answer = f"Declare a link <b>like this</b> [1]:\n\n{CODE}\n"
    cleaned = clean(answer, [CHUNK])
    assert CODE in cleaned
    assert "<b>" not in cleaned


def test_citations_are_renumbered_without_squashing_code_indentation() -> None:
    text, citations = cite(f"Declare a link [1].\n\n{CODE}\n[1]", [CHUNK])
    assert CODE in text and len(citations) == 1


def test_html_and_foreign_links_outside_code_are_still_removed() -> None:
    cleaned = clean("See <script>alert(1)</script> http://evil.example/x now [1].", [CHUNK])
    assert "script" not in cleaned and "evil.example" not in cleaned


def test_inline_code_keeps_its_tags_and_a_foreign_url_takes_its_whole_span_along() -> None:
    chunk = {"chunk_id": "c", "source": "w.md", "source_url": "https://docs.example.org/w", "title": "W",
             "heading_hierarchy": [], "score": 1.0, "text": ""}
    answer = "It is one `<script>` tag [1]. Set `QDRANT_URL=http://localhost:6333` and re-ingest [1]. <b>x</b>"
    cleaned = clean(answer, [chunk])  # type: ignore[list-item]
    assert "one `<script>` tag" in cleaned and "<b>" not in cleaned
    # An emptied `QDRANT_URL=` would read as the documented value; the link is not the docs' own, so the span goes.
    assert "QDRANT_URL" not in cleaned and "``" not in cleaned and "Set and re-ingest [1]." in cleaned
