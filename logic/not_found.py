"""The not-found reply's text: the nearest sections with deep links, and why the question went unanswered."""

from __future__ import annotations

import re

from logic.annotations import markdown_link
from logic.answerability import asked_about, asked_part
from logic.filters import describe, module_of
from logic.hygiene import safe_url
from logic.types import Chunk, NotFound, Section
from logic.unicode_text import normalize_text


def label(chunk: Chunk) -> str:
    """Name a chunk's section as its link goes: page title › the heading its anchor belongs to (the deepest)."""
    # The deep link's anchor is the innermost heading's, so a level-3 anchor gets the level-3 heading's name.
    heading = chunk["heading_hierarchy"][-1:]
    return normalize_text(" › ".join([chunk["title"], *(h for h in heading if h != chunk["title"])]))


# The not-found reply and the hedge name what was asked: the ask, without the situation a user tells before it,
# and a long ask cut at a word.
ASK_CHARS = 160
# An ask naming fewer things than this ("Why?", "How do I stop that?", "Which renderer do I use?") is named with
# the sentences before it that say what it is about.
ASK_WORDS = 2


def named_ask(question: str) -> str:
    """Return the part of a question to name back to the user: its ask, without end punctuation, at most ASK_CHARS."""
    ask = asked_part(question).strip().rstrip("?.! ")
    # An ask that points back ("…for that?") is named with the sentence it points to.
    told = max(asked_part(question, ASK_WORDS), asked_about(question), key=len).strip().rstrip("?.! ")
    if told != ask and len(told) > ASK_CHARS:  # the story cut from the front: the ask itself is what must show
        return "… " + told[-ASK_CHARS:].split(" ", 1)[-1].lstrip(",;: ")
    return told if len(told) <= ASK_CHARS else told[:ASK_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


_HEDGE = "The documentation does not directly answer {}; the closest it comes is:"
# The lead-in as hedge() writes it, at the start of an answer, with the blank line after it.
_HEDGED = re.compile(r"\A" + re.escape(_HEDGE).replace(r"\{\}", "(?:“.*?”|this)") + r"\s*", re.DOTALL)


def hedge(question: str) -> str:
    """Introduce a quote that may miss what was asked: the documentation does not directly answer the ask, named."""
    ask = named_ask(question)
    return _HEDGE.format(f"“{ask}”" if ask else "this")


def unhedged(answer: str) -> str:
    """Return an answer without the hedge's lead-in, which repeats the question rather than answers it."""
    return _HEDGED.sub("", answer, count=1)


def sections(chunks: list[Chunk], limit: int = 3) -> list[Section]:
    """Return up to `limit` distinct sections of the chunks, best first, with deep links."""
    found: dict[str, Section] = {}
    for chunk in chunks:
        name = label(chunk)
        if name not in found:
            found[name] = {"title": name, "source_url": safe_url(chunk["source_url"]),
                           "score": round(chunk["score"], 3), "source": chunk["source"]}
    return list(found.values())[:limit]


def _why(found: NotFound) -> str:
    """Explain the reason in one clause."""
    if found["reason"] == "no_results":
        return "the search found nothing to answer from."
    if found["reason"] == "unsupported":
        return "the passages found do not support an answer."
    if found["reason"] == "out_of_scope_intent":
        return "that is not something documentation can answer."
    if found["reason"] == "not_answerable":
        return "the sections closest to it do not answer it."
    # Scores stay in the response's fields and the logs: a reader cannot act on "0.21 below 0.48".
    return "it does not cover this."


def compose(query: str, found: NotFound, filters: dict[str, str], selection: bool, *, markdown: bool = False) -> str:
    """Write the not-found reply: what is missing, where, why, and the nearest sections.

    With `markdown`, each section is a Markdown link (the chat message); otherwise "title — url" (CLI, widget, MCP).
    """
    where = "your selection" if selection else describe(filters) if filters else "the documentation"
    links = "\n".join(f"- {markdown_link(s['title'], s['source_url'])}" if markdown
                      else f"- {s['title']} — {s['source_url']}" for s in found["nearest"])
    if found["reason"] == "filtered_out":
        best = found["nearest"][0].get("source", "") if found["nearest"] else ""
        other = module_of(best) or best or "another part of the documentation"
        return f"I don't have information about “{query}” in {where}; {other} covers it:\n{links}"
    answer = f"I don't have information about “{query}” in {where}: {_why(found)}"
    return answer + (f" What it does cover nearest to your question:\n{links}" if links else "")
