"""How a Markdown page becomes chunks: heading scopes, titles, anchors and a token budget."""

from __future__ import annotations

import pytest

from logic.chunking import chunk_markdown, count_tokens, slugify, split_front_matter

GUIDE = """\
---
title: Getting Started
---
# Getting Started

Welcome to the guide.

## Install

Run the installer.

### Linux

Use the package manager.

## Usage

Open the app.
"""


def text_of(page: str, source: str) -> str:
    """Return the text of every chunk a page is split into, as one string."""
    return "\n".join(chunk.body for chunk in chunk_markdown(page, source))


def by_body(chunks: list) -> dict:
    return {c.body: c for c in chunks}


def test_headings_split_page_with_hierarchy() -> None:
    chunks = by_body(chunk_markdown(GUIDE, "guide.md"))
    assert set(chunks) == {"Welcome to the guide.", "Run the installer.", "Use the package manager.",
                           "Open the app."}
    assert chunks["Welcome to the guide."].heading_hierarchy == []
    assert chunks["Run the installer."].heading_hierarchy == ["Install"]
    assert chunks["Use the package manager."].heading_hierarchy == ["Install", "Linux"]
    assert chunks["Open the app."].heading_hierarchy == ["Usage"]


def test_chunk_anchor_is_its_heading_slug() -> None:
    chunks = by_body(chunk_markdown(GUIDE, "guide.md"))
    assert chunks["Use the package manager."].anchor == "linux"
    assert chunks["Open the app."].anchor == "usage"


def test_chunks_are_numbered_in_page_order() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert {c.page_chunks for c in chunks} == {len(chunks)}
    assert [c.body for c in chunks][0] == "Welcome to the guide."


def test_front_matter_title_wins_over_h1() -> None:
    page = "---\ntitle: Custom Title\n---\n# Heading One\n\nBody text.\n"
    (chunk,) = chunk_markdown(page, "docs/page.md")
    assert chunk.title == "Custom Title"
    assert "title:" not in chunk.body


def test_h1_is_title_when_no_front_matter() -> None:
    (chunk,) = chunk_markdown("# Baking bread\n\nKnead the dough.\n", "docs/baking.md")
    assert chunk.title == "Baking bread"
    assert chunk.heading_hierarchy == []


def test_file_name_is_title_when_no_heading() -> None:
    (chunk,) = chunk_markdown("Just some text.\n", "docs/sub/release-notes.md")
    assert chunk.title == "release-notes"


def test_hash_lines_in_code_fences_are_not_headings() -> None:
    page = (
        "# Title\n\n## Setup\n\n"
        "```bash\n# install the package\npip install foo\n```\n\n"
        "~~~\n## not a heading\n~~~\n"
    )
    chunks = chunk_markdown(page, "setup.md")
    assert len(chunks) == 1
    assert chunks[0].heading_hierarchy == ["Setup"]
    assert "# install the package" in chunks[0].body
    assert "## not a heading" in chunks[0].body


def test_code_block_is_kept_whole_in_one_chunk() -> None:
    page = "# T\n\n```python\ndef f():\n\n    return 1\n```\n"
    (chunk,) = chunk_markdown(page, "t.md")
    assert chunk.body == "```python\ndef f():\n\n    return 1\n```"


def test_duplicate_headings_get_numbered_anchors() -> None:
    page = "# T\n\n## Example\n\nfirst\n\n## Example\n\nsecond\n\n## Example\n\nthird\n"
    anchors = [c.anchor for c in chunk_markdown(page, "t.md")]
    assert anchors == ["example", "example-1", "example-2"]


def test_chunk_token_budget_is_respected() -> None:
    paragraphs = [f"Paragraph {i} explains how robots use sensors in simulation." for i in range(30)]
    page = "# Robots\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_markdown(page, "robots.md", chunk_tokens=40)
    assert len(chunks) > 1
    assert all(c.token_count <= 40 for c in chunks)
    assert all(c.token_count == count_tokens(c.body) for c in chunks)
    # Nothing is lost or duplicated: every paragraph lands in exactly one chunk.
    assert sum(c.body.count("Paragraph ") for c in chunks) == 30


def test_embedding_text_carries_heading_path() -> None:
    chunks = by_body(chunk_markdown(GUIDE, "guide.md"))
    text = chunks["Use the package manager."].embedding_text()
    assert text.startswith("Getting Started > Install > Linux\n\n")


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello World", "hello-world"),
        ("What's new?", "whats-new"),
        ("Step 1: Install", "step-1-install"),
        ("C++ & Python", "c--python"),
        ("`code` and *emphasis*", "code-and-emphasis"),
        ("See [the docs](https://example.com)", "see-the-docs"),
        ("Überblick", "überblick"),
        ("already-hyphenated", "already-hyphenated"),
    ],
)
def test_slugify_matches_docusaurus(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_slugify_keeps_underscores_like_docusaurus() -> None:
    assert slugify("`max_tokens` option") == "max_tokens-option"


def test_front_matter_is_split_from_body() -> None:
    front, body = split_front_matter("---\ntitle: T\nslug: /x\n---\n# H\n")
    assert front == {"title": "T", "slug": "/x"}
    assert body == "# H\n"


def test_bad_front_matter_is_ignored() -> None:
    front, _ = split_front_matter("---\ntitle: [unclosed\n---\nBody\n")
    assert front == {}


def test_an_oversized_code_block_is_cut_into_fenced_halves() -> None:
    code = "\n".join(f"value_{i} = compute({i}, factor={i * 3})  # step {i}" for i in range(80))
    page = f"# Page\n\nThe script below:\n```python\n{code}\n```\nAfter the code.\n"
    chunks = chunk_markdown(page, "p.md", chunk_tokens=200)
    code_chunks = [c for c in chunks if "value_" in c.body]
    assert len(code_chunks) > 1
    for chunk in code_chunks:
        assert chunk.body.count("```") == 2, chunk.body
        assert "```python" in chunk.body.splitlines()
    assert "".join(c.body for c in chunks).count("value_") == 80


def test_every_piece_of_a_wide_table_has_its_header_even_a_piece_of_one_row() -> None:
    # Padded columns (as a formatter writes them) make a header, its rule and one row outgrow a chunk on their own.
    rule = "| " + " | ".join(["-" * 60] * 3) + " |"
    rows = [f"| `Error{i}` | `ERR_{i}` | {'the request failed because the server went away ' * (1 + i % 4)} |"
            for i in range(12)]
    table = "\n".join(["| Error | Code | Description |", rule, *rows])
    chunks = chunk_markdown(f"# Errors\n\n{table}\n", "errors.md", chunk_tokens=120)
    assert len(chunks) > 3
    for chunk in chunks:
        lines = chunk.body.splitlines()
        assert lines[:2] == ["| Error | Code | Description |", rule] and len(lines) > 2, chunk.body
    assert sum(c.body.count("`ERR_") for c in chunks) == 12


def test_an_unclosed_oversized_code_block_is_still_cut_and_fenced() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(200))
    chunks = chunk_markdown(f"# Page\n\n```\n{code}\n", "p.md", chunk_tokens=100)
    assert len(chunks) > 1
    assert all(c.body.count("```") == 2 for c in chunks)


def test_explicit_heading_id_is_the_anchor_and_not_part_of_the_heading() -> None:
    page = "# Title {#top}\n\n## Install ROS {#install-ros}\n\nRun apt.\n"
    (chunk,) = chunk_markdown(page, "p.md")
    assert chunk.title == "Title"
    assert chunk.anchor == "install-ros" and chunk.heading_hierarchy == ["Install ROS"]


def test_overlap_repeats_the_previous_chunks_closing_sentence() -> None:
    sentences = "\n".join(f"Sentence {i} talks about robot arm number {i}." for i in range(40))
    chunks = chunk_markdown(f"# T\n\n{sentences}\n", "t.md", chunk_tokens=60, overlap=15)
    assert len(chunks) > 2
    assert all(c.token_count <= 60 for c in chunks)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert current.body.splitlines()[0] in previous.body


def test_overlap_must_stay_below_half_the_chunk() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_markdown("# T\n\ntext\n", "t.md", chunk_tokens=60, overlap=30)


def test_sidebar_label_titles_a_page_without_title_or_h1() -> None:
    (chunk,) = chunk_markdown("---\nsidebar_label: Quick tour\n---\n\nSome text.\n", "docs/tour.md")
    assert chunk.title == "Quick tour"


def test_a_long_wrapped_paragraph_is_cut_between_sentences_not_mid_sentence() -> None:
    sentences = [f"Sentence {i} explains how the warm agent relays ask number {i} over its socket." for i in range(12)]
    text = " ".join(sentences)
    wrapped = "\n".join(text[i:i + 70] for i in range(0, len(text), 70))  # hard-wrapped mid-sentence, as editors do
    chunks = chunk_markdown(f"# Warm\n\n{wrapped}\n", "warm.md", chunk_tokens=120)
    assert len(chunks) > 1
    assert all(c.token_count <= 120 for c in chunks)
    assert all(c.body.rstrip().endswith(".") for c in chunks), [c.body[-30:] for c in chunks]
    assert "".join(c.body.replace("\n", "") for c in chunks).replace(" ", "") == text.replace(" ", "")


def test_a_long_single_line_paragraph_is_cut_too() -> None:
    text = " ".join(f"Sentence {i} is about the robot's arm and its many joints." for i in range(40))
    chunks = chunk_markdown(f"# Arm\n\n{text}\n", "arm.md", chunk_tokens=100)
    assert len(chunks) > 1 and all(c.token_count <= 100 for c in chunks)


def test_docs_markup_is_normalised_before_chunking() -> None:
    page = ("# Panics\n\n> If you want to abort on panic in release mode,\n> add this:\n>\n> ```toml\n"
            "> [profile.release]\n> panic = 'abort'\n> ```\n\n<!-- a note for editors -->\n"
            '<Listing number="9-6" file-name="src/main.rs">\n\n```xml\n<gravity>0</gravity> <!-- Earth -->\n```\n\n'
            '</Listing>\n\n!!! note "Heads up"\n    Read the [list of extensions][exts] first.\n\n[exts]: https://x.test/e\n')
    body = text_of(page, "panics.md")
    assert not any(line.startswith(">") for line in body.splitlines())
    assert "!!!" not in body and "<Listing" not in body and "[exts]" not in body
    assert "a note for editors" not in body
    assert "```toml\n[profile.release]\npanic = 'abort'\n```" in body
    assert "<gravity>0</gravity> <!-- Earth -->" in body  # code is kept as written
    assert "Read the list of extensions first." in body


def test_a_footnote_is_read_as_its_text_and_its_mark_is_not_quoted() -> None:
    page = ("# Console Output\n\nThe renderer offers nicely aligned and colorful[^win] console output.\n\n"
            "[^win]: Requires the [Colorama package](https://pypi.org/project/colorama/) on Windows.\n\n"
            "In code, `table[^1]` stays as written.\n")
    body = text_of(page, "console.md")
    assert "colorful console output." in body and "[^win]" not in body
    assert "Requires the [Colorama package](https://pypi.org/project/colorama/) on Windows." in body
    assert "`table[^1]`" in body


def test_wrapped_reference_links_entities_and_attribute_lists_read_as_the_page_shows_them() -> None:
    page = ("# Keywords\n\nThey can be raw identifiers, as we discuss in the [“Raw\nIdentifiers”][raw-identifiers]"
            "<!-- ignore --> section. The team provides a [`rand`\ncrate][randcrate] for that.\n\n"
            "* **Before** validators run first.\n  {#model-before-validator}\n* After validators run last.\n"
            "* **`locale`**{ #mkdocs-locale }: the theme's language.\n\n"
            "Around 8,000 packages &mdash; the `&mdash;` in code and &lt;b&gt; stay.\n")
    body = text_of(page, "keywords.md")
    assert "the “Raw\nIdentifiers” section." in body and "a `rand`\ncrate for that." in body
    assert "{#model" not in body and "validators run first.\n* After" in body
    assert "* **`locale`**: the theme's language." in body
    assert "8,000 packages — the `&mdash;` in code and &lt;b&gt; stay." in body


def test_a_shortcut_reference_link_shows_its_text_and_other_brackets_stay() -> None:
    page = ("# Favicon\n\nBy default, MkDocs uses the [MkDocs favicon] icon; set the [locale] of the [theme].\n"
            "Tick [x] when done, and `opts[locale]` is code.\n\n[MkDocs favicon]: https://x.test/favicon.ico\n"
            "[locale]: #locale\n[Theme]: #theme\n")
    body = text_of(page, "favicon.md")
    assert "uses the MkDocs favicon icon; set the locale of the theme." in body
    assert "Tick [x] when done, and `opts[locale]` is code." in body


def test_code_spans_between_runs_of_backticks_read_as_spans_and_open_no_block() -> None:
    page = ("# Holt-Winters\n\nThe fits:\n\n1. ```fit1``` additive trend, period ```season_length=4```.\n"
            "1. ```fit2``` multiplicative seasonal.\n\n"
            "```fit3``` is damped. Use the ``C()`` operator; `` `a` `` stays.\n\n"
            "```python\nfit1 = ExponentialSmoothing(aust).fit()\n```\n")
    body = text_of(page, "ets.md")
    assert "1. `fit1` additive trend, period `season_length=4`.\n1. `fit2` multiplicative seasonal." in body
    assert "`fit3` is damped. Use the `C()` operator; `` `a` `` stays." in body
    assert "```python\nfit1 = ExponentialSmoothing(aust).fit()\n```" in body


def test_a_reference_link_around_a_code_span_keeps_only_the_span() -> None:
    page = ("# Models\n\nPydantic also provides the [`model_construct()`][pydantic.main.BaseModel.model_construct]\n"
            "method, which creates models without validation. In code, `[a][b]` stays as written.\n")
    body = text_of(page, "models.md")
    assert "provides the `model_construct()`\nmethod" in body and "[pydantic.main" not in body
    assert "`[a][b]`" in body


def test_an_html_anchor_in_a_heading_is_its_anchor_and_closing_tags_are_not_text() -> None:
    # The page's own `<a name>` is the section's anchor on any site generator; a one-letter element's closing
    # tag ("themes</a>") is markup like any other, while a type's brackets (`Option<i>`) are text.
    page = ('# Schema\n\n### Implementing `__get_schema__` <a name="implementing_get_schema"></a>\n\n'
            'See the <a href="themes/">themes</a> and <b>bold</b> notes; `Option<i>` and Option<i> stay.\n')
    chunk = chunk_markdown(page, "schema.md")[-1]
    assert chunk.heading_hierarchy[-1] == "Implementing `__get_schema__`"
    assert chunk.anchor == "implementing_get_schema"
    assert "See the themes and bold notes; `Option<i>` and Option<i> stay." in chunk.body
