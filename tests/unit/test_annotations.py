"""Source links in the chat message stay links in any Markdown renderer, whatever the titles and URLs hold."""

from __future__ import annotations

from logic.annotations import markdown_link


def test_a_title_with_brackets_and_a_url_with_parentheses_stay_one_link() -> None:
    link = markdown_link("Arrays [deprecated] › a\\b", "https://docs.example/x_(y) z#a")
    assert link == r"[Arrays \[deprecated\] › a\\b](https://docs.example/x_%28y%29%20z#a)"


def test_a_section_without_a_safe_link_is_named_without_one() -> None:
    assert markdown_link("Setup", "") == "Setup"
