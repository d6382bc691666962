"""How the `rag-agent` commands print an answer and which exit code it gets (shared by the cli modules)."""

from __future__ import annotations

import json
import sys
from typing import Any

from logic.unicode_text import HIDDEN
from logic.validation import printable

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def print_answer(result: dict[str, Any], streamed: bool = False) -> None:
    """Print an answer (unless it was already streamed) and its sources for a person."""
    # Everything shown comes from documents, the model or the user: no escape sequence gets through.
    print("" if streamed else printable(result["answer"]))
    for c in result["citations"]:
        where = " › ".join([c["title"], *c["heading_hierarchy"]])
        print(printable(f"  [{c['index']}] {where} — {c['source_url']}"))


def print_event(event: dict[str, str]) -> None:
    """Print an answer event as it arrives; a replacement starts on a fresh line."""
    if "answer_replace" in event:
        sys.stdout.write("\n" + printable(event["answer_replace"]))
    else:
        sys.stdout.write(printable(event["answer_delta"]))
    sys.stdout.flush()


def exit_code_for(error_code: str | None) -> int:
    """Map an error code (None: no error) to the documented exit code: the one place that says it."""
    if error_code is None:
        return EXIT_OK
    return EXIT_INVALID if error_code == "INVALID_INPUT" else EXIT_FAILED


def exit_code(result: dict[str, Any]) -> int:
    """Map a response to the documented exit code."""
    if result["status"] != "error":
        return EXIT_OK
    return exit_code_for((result["error"] or {}).get("code") or "INTERNAL_ERROR")


def dump_json(value: Any, indent: int | None = None) -> str:
    """Serialise for a terminal: like json.dumps, with C1 controls and hidden characters (bidi, tags) escaped too."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    text = HIDDEN.sub(lambda m: json.dumps(m.group(0)).strip('"'), text)  # as JSON's own \\uXXXX escapes
    return "".join(f"\\u{ord(ch):04x}" if "\x7f" <= ch <= "\x9f" else ch for ch in text)
