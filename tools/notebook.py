"""How a Jupyter notebook (a course or Jupyter Book page) becomes Markdown: its cells in order, as the page shows them.

Markdown cells are kept as written; a code cell becomes a fenced block in the notebook's language, followed by
its text output (what a reader of the built page sees under the code). Images, HTML and widget output are not
text and are left out, as are raw cells (meant for other output formats). The tags Jupyter Book uses to hide
a cell, its input or its output are honoured, so the index holds what the site shows.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Jupyter Book's cell tags: what the built page leaves out.
_REMOVE_CELL = frozenset({"remove-cell", "remove_cell"})
_REMOVE_INPUT = frozenset({"remove-input", "remove_input"}) | _REMOVE_CELL
_REMOVE_OUTPUT = frozenset({"remove-output", "remove_output"}) | _REMOVE_CELL
# A long output (a printed table, a training log) is cut to its first lines: the rest adds noise, not meaning.
MAX_OUTPUT_LINES = 30
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def notebook_to_markdown(text: str) -> str:
    """Return a notebook's cells as one Markdown page; a file that is not an nbformat 4 notebook raises ValueError."""
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a Jupyter notebook: invalid JSON ({exc})") from exc
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        version = notebook.get("nbformat") if isinstance(notebook, dict) else None
        raise ValueError(f"not a Jupyter notebook in nbformat 4 (nbformat {version}); "
                         "save it with a current Jupyter to index it")
    language = _language(notebook.get("metadata"))
    blocks = []
    for cell in notebook["cells"]:
        if isinstance(cell, dict):
            blocks.extend(_cell(cell, language))
    return "\n\n".join(b for b in blocks if b.strip()) + "\n"


def _language(metadata: Any) -> str:
    """Name the notebook's language for its code fences (Python when it does not say)."""
    if isinstance(metadata, dict):
        for key, field in (("language_info", "name"), ("kernelspec", "language")):
            entry = metadata.get(key)
            if isinstance(entry, dict) and isinstance(entry.get(field), str) and entry[field].strip():
                return str(entry[field]).strip().split()[0].lower()
    return "python"


def _cell(cell: dict[str, Any], language: str) -> list[str]:
    """Return one cell as the Markdown blocks the built page shows."""
    tags = {t for t in _mapping(cell.get("metadata")).get("tags") or [] if isinstance(t, str)}
    kind = cell.get("cell_type")
    if kind == "markdown" and not tags & _REMOVE_CELL:
        return [_joined(cell.get("source")).strip()]
    if kind != "code":
        return []
    blocks = []
    source = _joined(cell.get("source")).strip("\n")
    if source.strip() and not tags & _REMOVE_INPUT:
        blocks.append(_fenced(source, language))
    if not tags & _REMOVE_OUTPUT:
        blocks.extend(_output(out) for out in cell.get("outputs") or [] if isinstance(out, dict))
    return blocks


def _output(output: dict[str, Any]) -> str:
    """Return a code cell's output as text: a stream, a result's Markdown or plain text, an error's one line."""
    kind = output.get("output_type")
    if kind == "stream":
        return _fenced(_cut(_joined(output.get("text"))), "text")
    if kind == "error":
        return _fenced(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".strip(), "text")
    data = _mapping(output.get("data"))
    if "text/markdown" in data:
        return _joined(data["text/markdown"]).strip()
    if "text/plain" in data and not any(k.startswith(("image/", "application/vnd.jupyter.widget")) for k in data):
        # A figure's or a widget's text/plain is a repr such as "<Figure size 640x480>", not content; a
        # table's (next to its HTML) is the table as text.
        return _fenced(_cut(_joined(data["text/plain"])), "text")
    return ""


def _mapping(value: Any) -> dict[str, Any]:
    """Return a notebook field that should be an object, or an empty one when the file holds something else."""
    return value if isinstance(value, dict) else {}


def _joined(value: Any) -> str:
    """Return a notebook field as one string: nbformat stores text either whole or as a list of lines."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _cut(text: str) -> str:
    """Return an output's text without terminal colours, cut to its first lines."""
    lines = _ANSI.sub("", text).strip("\n").splitlines()
    return "\n".join(lines[:MAX_OUTPUT_LINES] + (["…"] if len(lines) > MAX_OUTPUT_LINES else []))


def _fenced(body: str, language: str) -> str:
    """Fence a block with more backticks than any run inside it."""
    if not body.strip():
        return ""
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{body}\n{fence}"
