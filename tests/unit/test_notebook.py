"""Jupyter notebooks (course and Jupyter Book pages) are read as their built pages show them, and indexed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_ingest_folder import chunks_of
from tools.notebook import MAX_OUTPUT_LINES, notebook_to_markdown
from tools.sources import from_folder


def notebook(*cells: dict[str, Any], language: str = "python") -> str:
    """Return an nbformat 4 notebook holding the cells, sources stored as lists of lines as Jupyter saves them."""
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": list(cells),
                       "metadata": {"kernelspec": {"name": "k", "language": language, "display_name": "K"}}})


def markdown(text: str, tags: tuple[str, ...] = ()) -> dict[str, Any]:
    """A Markdown cell."""
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": text.splitlines(keepends=True)}


def code(text: str, *outputs: dict[str, Any], tags: tuple[str, ...] = ()) -> dict[str, Any]:
    """A code cell with its outputs."""
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "execution_count": 1,
            "source": text.splitlines(keepends=True), "outputs": list(outputs)}


LESSON = notebook(
    markdown("# Filtering rows\n\nKeep the rows you need with a boolean mask."),
    code("import pandas as pd\nsales = pd.read_csv('sales.csv')", tags=("remove-input",)),
    code("big = sales[sales.amount > 100]\nprint(len(big))", {"output_type": "stream", "name": "stdout",
                                                         "text": ["\x1b[1m42\x1b[0m\n"]}),
    markdown("## Plotting\n\nA histogram shows the spread."),
    code("sales.amount.hist()", {"output_type": "display_data", "metadata": {},
                                 "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480>"]}}),
    code("secret_setup()", {"output_type": "stream", "name": "stdout", "text": "token printed\n"},
         tags=("remove-cell",)),
    {"cell_type": "raw", "metadata": {}, "source": ["\\newpage"]},
    code("1 / 0", {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                   "traceback": ["\x1b[0;31m----\x1b[0m"]}),
)


def test_cells_read_in_order_as_the_built_page_shows_them() -> None:
    page = notebook_to_markdown(LESSON)
    assert page.index("# Filtering rows") < page.index("big = sales") < page.index("## Plotting")
    assert "```python\nbig = sales[sales.amount > 100]\nprint(len(big))\n```" in page
    assert "```text\n42\n```" in page  # the printed output, without its terminal colours
    assert "```text\nZeroDivisionError: division by zero\n```" in page
    # A hidden input, a removed cell, a raw cell and a figure's repr are not on the built page.
    assert "read_csv" not in page and "secret_setup" not in page and "token printed" not in page
    assert "\\newpage" not in page and "<Figure" not in page and "\x1b" not in page


def test_a_table_shows_as_text_a_long_output_is_cut_and_fences_hold() -> None:
    table = {"output_type": "execute_result", "execution_count": 2, "metadata": {},
             "data": {"text/html": "<table>…</table>", "text/plain": "   amount\n0     120\n1     340"}}
    log = {"output_type": "stream", "name": "stdout", "text": "".join(f"epoch {i}\n" for i in range(100))}
    page = notebook_to_markdown(notebook(code("sales.head(2)", table), code("train()", log),
                                         markdown("Fences in Markdown:\n\n```\nx\n```"),
                                         code('doc = """\n```\nnested\n```\n"""'), language="R"))
    assert "```text\n   amount\n0     120\n1     340\n```" in page
    assert f"epoch {MAX_OUTPUT_LINES - 1}\n…" in page and f"epoch {MAX_OUTPUT_LINES}\n" not in page
    assert "````r\ndoc = \"\"\"\n```\nnested\n```\n\"\"\"\n````" in page


@pytest.mark.parametrize(("text", "problem"), [
    ("{not json", "invalid JSON"),
    (json.dumps({"nbformat": 3, "worksheets": []}), "nbformat 3"),
    (json.dumps([1, 2]), "nbformat None"),
])
def test_a_file_that_is_not_a_current_notebook_is_named(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        notebook_to_markdown(text)


def test_a_folder_of_notebooks_is_ingested_and_a_broken_one_reported(tmp_path: Path) -> None:
    root = tmp_path / "book"
    (root / "lessons" / ".ipynb_checkpoints").mkdir(parents=True)
    (root / "lessons" / "filtering.ipynb").write_text(LESSON)
    (root / "lessons" / ".ipynb_checkpoints" / "filtering-checkpoint.ipynb").write_text(LESSON)
    (root / "lessons" / "broken.ipynb").write_text('{"cells": [')
    (root / "intro.md").write_text("# Introduction\n\nThe lessons use pandas.\n")
    found = from_folder(root)
    assert sorted(found.docs) == ["intro.md", "lessons/filtering.ipynb"]
    assert "invalid JSON" in found.failed["lessons/broken.ipynb"]
    lesson = chunks_of(root, tmp_path / "data", "lessons/filtering.ipynb")
    assert {m["title"] for m in lesson} == {"Filtering rows"}
    assert "plotting" in {m["anchor"] for m in lesson}
    assert any("sales.amount > 100" in m["text"] for m in lesson)

