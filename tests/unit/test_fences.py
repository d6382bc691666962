"""A page about Markdown shows a ``` block inside a ```` block: both stay one code block, as the page renders."""

from __future__ import annotations

from logic.chunking import chunk_markdown
from logic.extractive import sentences
from logic.grounding import split_claims
from logic.hygiene import outside_code
from logic.passages import units

PAGE = """# Writing pages

Fence code with backticks. To show a fence itself, use a longer one:

````markdown
# Not a heading

```python
# say hello
print("hello")
```

Text between the inner blocks is still the example.
````

## Next steps

Publish the site with the deploy command once it builds cleanly.
"""


def test_a_nested_fence_keeps_its_block_whole_and_its_hash_lines_are_no_headings() -> None:
    chunks = chunk_markdown(PAGE, "writing.md")
    assert [c.heading_hierarchy for c in chunks] == [[], ["Next steps"]]
    assert chunks[0].body.endswith("Text between the inner blocks is still the example.\n````")


def test_a_nested_block_is_quoted_whole_after_its_lead_in_and_none_of_it_is_prose() -> None:
    quoted = units(PAGE)
    blocks = [u for u in quoted if u.kind == "code"]
    assert len(blocks) == 1 and blocks[0].lead == "To show a fence itself, use a longer one:"
    assert blocks[0].body.startswith("````markdown\n# Not a heading") and blocks[0].body.endswith("````")
    assert not any("between the inner blocks" in s for s in sentences(PAGE))
    prose = [u.body for u in quoted if u.kind == "sentence"]
    assert prose == ["Fence code with backticks.", "Publish the site with the deploy command once it builds cleanly."]


def test_answer_checks_leave_a_nested_block_as_written() -> None:
    answer = "Use a longer fence: [1]\n\n````markdown\n```python\nx = [1]\n```\n<b>the example</b>\n````\n\nDone. [2]"
    assert outside_code(answer, str.upper) == answer.replace("Use a longer fence", "USE A LONGER FENCE") \
        .replace("Done.", "DONE.")
    claims = split_claims(answer)
    assert any(c.startswith("````markdown") and c.rstrip().endswith("````") for c in claims)
    assert not any("<b>the example</b>" in c and not c.startswith("````") for c in claims)


def test_a_myst_code_directive_with_a_longer_fence_keeps_its_example_inside() -> None:
    page = ("Write the example like this:\n\n````{code-block} markdown\n:caption: page.md\n\n```python\nx = 1\n```\n"
            "````\n\nThe build then highlights it as Python for every reader of the page.\n")
    quoted = units(page)
    assert [u.kind for u in quoted] == ["code", "sentence"]
    assert quoted[0].body == "````markdown\n```python\nx = 1\n```\n````"
