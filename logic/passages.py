"""Split a chunk's Markdown into quotable units: prose sentences, and lists, tables and code kept whole."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Literal

from logic.fences import closes, opening, span_open
from logic.markdown_text import normalize_markdown

Kind = Literal["sentence", "list", "table", "code"]
_BULLET = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+")
# A numbered line ("255. If you try …") goes on the paragraph before it unless it numbers 1: only a list starting at 1
# may interrupt a paragraph (CommonMark), and hard-wrapped prose often puts a number at a line's start.
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# What starts a block of its own right after a paragraph, so cannot go on a list item's: a heading, a quote, a
# table row, an HTML tag, a rule, a bullet with nothing after it (an empty item, which shows nothing).
_INTERRUPTS = re.compile(r"^\s*(?:#{1,6}(?:\s|$)|>|\||<|(?:[-*_]\s*){3,}$|[-+*]\s*$)")
# Emphasis and code markers, quote and heading prefixes; intra-word underscores (OPENAI_API_KEY) stay.
_MD_NOISE = re.compile(r"\*+|`+|^\s*[>#]+\s*|(?<!\w)_+|_+(?!\w)")
_PROSE_WORD = re.compile(r"^[(\"'“]?[A-Za-z][A-Za-z'’-]*[.,;:!?)\"'”]*$")
_CODE_SIGNAL = re.compile(r'"""|\(self\b|^\s*(?:def|class|import|from)\s|\s=\s')
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
# A whole sentence opens like one and ends with its mark (a lead-in with its colon); a line cut from a
# wrapped paragraph ("small as possible, you can switch ... by") is a fragment, never quoted.
_WHOLE = re.compile(r"^[\"'“‘(\[*_`]*[A-Z0-9`].*[.!?:][\"'”’)\]*_`]*$", re.DOTALL)
# A quoted list, table or code block longer than this is cut at a line end (and a fence closed).
MAX_BLOCK_LINES = 30


def plain(markdown: str) -> str:
    """Return Markdown as plain words: link text kept, emphasis, code and heading markers dropped."""
    return " ".join(_MD_NOISE.sub("", _MD_LINK.sub(r"\1", line)).strip() for line in markdown.splitlines()).strip()


def is_prose(sentence: str) -> bool:
    """Tell prose from code or data that slipped out of a split code block (`x = f(y)`, `0.0, 0.25`)."""
    tokens = sentence.split()
    if len(tokens) < 4 or _CODE_SIGNAL.search(sentence):
        return False
    return sum(bool(_PROSE_WORD.match(t)) for t in tokens) >= 0.6 * len(tokens)


def _continues(previous: str, line: str) -> bool:
    """Tell whether `line` is a hard-wrapped continuation of the sentence on the `previous` line."""
    stripped = line.strip()
    if not previous or not stripped or stripped.startswith(("|", "#", ">")) or (_BULLET.match(line)
                                                                               and not _renumbered(line)):
        return False
    if previous.rstrip().endswith((".", "!", "?")) or _CODE_SIGNAL.search(previous + " " + line):
        return False
    if previous.rstrip().endswith(":") and not stripped[0].islower():  # a lead-in to a list or a new sentence
        return False
    # A bullet's own wrapped lines are indented; an unindented line after it is a new paragraph.
    return is_prose(previous) and (not _BULLET.match(previous) or _renumbered(previous)
                                   or line.startswith((" ", "\t")))


def _renumbered(line: str) -> bool:
    """Tell whether a line starts with a number other than 1 and a stop, as a list item or wrapped prose may."""
    numbered = _NUMBERED.match(line)
    return numbered is not None and numbered.group(1) != "1"


def join_wrapped(lines: list[str]) -> list[str]:
    """Join hard-wrapped lines into the sentences they belong to; each other line stands alone (tables dropped)."""
    blocks: list[str] = []
    previous = ""
    for line in lines:
        # A code span wrapped over two lines ("the message `already borrowed:" / "BorrowMutError`.") goes on
        # whatever the line before it ends with: cut there, the quote would hold half a span.
        if blocks and ((previous and line.strip() and span_open(blocks[-1])) or _continues(previous, line)):
            blocks[-1] += " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("|"):  # table rows are data, not prose
            blocks.append(line)
        previous = line if line.strip() else ""
    return blocks


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a chunk: its kind, the sentence introducing it (for blocks) and its text."""

    kind: Kind
    lead: str
    body: str
    position: int
    paragraph: int = 0  # the passage it belongs to: a paragraph with the block its last sentence introduces
    section: int = 0  # how many headings come before it in its chunk

    @property
    def text(self) -> str:
        """Return the unit as plain words, for scoring."""
        return plain(f"{self.lead} {self.body}")


Group = Literal["prose", "cut"]


def _group(lines: list[str]) -> list[tuple[Kind | Group, list[str]]]:
    """Group consecutive lines into fenced code (`cut` when the chunk ends inside it), table, list and prose runs."""
    groups: list[tuple[Kind | Group, list[str]]] = []
    fence: list[str] | None = None  # the open block's lines, its opening fence first
    for line in lines:
        if fence is not None:
            fence.append(line)
            if closes(line, opening(fence[0]) or "```"):
                groups.append(("code", fence))
                fence = None
            continue
        if opening(line):
            fence = [line]
            continue
        stripped = line.strip()
        if (stripped and line.startswith((" ", "\t")) and len(groups) > 1 and groups[-1][0] == "prose"
                and not groups[-1][1] and groups[-2][0] == "list"):
            groups.pop()  # an indented paragraph after a blank line is the list item's own (its "Default: x")
            groups[-1][1].append("")
        # A list item's paragraph goes on over lines indented under it, or not indented at all (CommonMark's lazy
        # continuation: "* … where you'd like to use\na base class with …"); cut there, it would be quoted cut off.
        in_paragraph = (bool(groups) and groups[-1][0] == "prose" and bool(groups[-1][1])
                        and not groups[-1][1][-1].lstrip().startswith("#"))
        kind: Kind | Group = (
            "prose" if in_paragraph and _renumbered(line)
            else "table" if stripped.startswith("|") else "list" if _BULLET.match(line)
            else "list" if groups and groups[-1][0] == "list" and stripped
            and (line.startswith((" ", "\t")) or not _INTERRUPTS.match(line))
            else "prose")
        if not stripped:
            groups.append(("prose", []))  # a blank line ends a paragraph
        elif groups and groups[-1][0] == kind and (kind != "prose" or groups[-1][1]):
            groups[-1][1].append(line)
        else:
            groups.append((kind, [line]))
    if fence is not None:  # a chunk cut inside a code block: quote what there is (closed by _bounded)
        groups.append(("cut", fence))
    return groups


# A reference entry's name alone on its line, ending in a colon (a Sphinx object's signature: tools/restructured.py).
_TERM = re.compile(r"(`[^`\n]+`):")
# A line of a template directive (`{{#include ../listings/x.rs}}`): the site's build inserts code there, so
# a block holding only such lines shows the reader nothing.
_DIRECTIVE = re.compile(r"^\s*\{\{.*\}\}\s*$")
# Diagram languages: the site draws a picture from the block, so its source is not what the reader sees.
_DIAGRAMS = frozenset({"mermaid", "plantuml", "puml", "dot", "graphviz", "d2", "nomnoml"})
# A code line's strings (template strings too) and its comment, whose brackets and colons are not code's. A comment
# starts a line or follows a space: the "//" of `https://host:${port}` is part of a string, not a remark.
STRINGS_AND_REMARKS = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|(?<!\S)(?:#|//).*$")


def _depth(line: str) -> int:
    """Return how many brackets a code line opens minus those it closes (strings and comments aside)."""
    code = STRINGS_AND_REMARKS.sub("", line)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _opens_block(line: str) -> bool:
    """Tell a line that opens a block its next lines fill in (`def f():`, `else:`, a YAML `theme:`)."""
    kept = STRINGS_AND_REMARKS.sub(lambda m: "" if m.group(0).lstrip().startswith(("#", "//")) else "s", line)
    return kept.rstrip().endswith(":")  # a string stays a value: `key: "a:"` is set, not opened


def _whole_statements(code: list[str]) -> list[str]:
    """Return a cut code block's lines up to the last one that closes every bracket and opens no block."""
    depth, last = 0, 0
    for n, line in enumerate(code, 1):
        depth += _depth(line)
        if depth <= 0 and line.strip():
            last = n if not _opens_block(line) else last
            depth = 0
    return code[:last]


def _whole_part(code: list[str]) -> list[str]:
    """Return the last run of a code piece's lines that closes no bracket it did not open, "…" where it was cut.

    A piece chunking cut from a longer block may open with the end of a call the previous piece began ("  ]),")
    and end by closing what encloses it all ("  ])"): between those the statements are whole. What comes before
    the last such closing is the end of code shown elsewhere; the piece's own statements come after it.
    """
    runs, start, depth = [], 0, 0
    for n, line in enumerate(code):
        depth += _depth(line)
        if depth < 0:
            runs.append((start, n))
            start, depth = n + 1, 0
    if not runs:
        return code
    runs.append((start, len(code)))
    written = [run for run in runs if any(line.strip() for line in code[run[0]:run[1]])]
    if not written:
        return []
    first, last = written[-1]
    kept = code[first:last]
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    if not kept:
        return []
    # Without what it was nested in, the run starts at the margin; its own indentation stays.
    lines = textwrap.dedent("\n".join(kept)).splitlines()
    return [*(["…"] if first else []), *lines, *(["…"] if last < len(code) else [])]


def _bounded(kind: Kind, lines: list[str], closed: bool = True) -> str:
    """Return a block's lines, cut at MAX_BLOCK_LINES (code at its last whole statement) with the fence closed.

    Of code a chunk opens inside of (the tail of a call the previous chunk began) its last run of whole statements.
    """
    if kind != "code":
        return "\n".join(lines if len(lines) <= MAX_BLOCK_LINES else [*lines[:MAX_BLOCK_LINES - 1], "…"])
    fence, body = lines[0], lines[1:-1] if closed else lines[1:]
    code = _whole_part(body)
    written = [line for line in code if line.strip()]
    # A block cut by the page's chunking right after `def f():` or `else:` would show a header with no body.
    ends_whole = closed or not written or not _opens_block(written[-1])
    if len(code) <= MAX_BLOCK_LINES - 2 and sum(map(_depth, code)) <= 0 and ends_whole:
        return "\n".join(lines if closed and code == body else [fence, *code, opening(fence) or "```"])
    # A dict or call cut mid-way (by the page's chunking or the bound) reads as broken code: keep the
    # statements that end, then say that it goes on.
    return "\n".join([fence, *_whole_statements(code[:MAX_BLOCK_LINES - 2]), "…", opening(fence) or "```"])


def _diagram(kind: Kind, lines: list[str]) -> bool:
    """Tell a code block that is a diagram's source (its fence names a diagram language)."""
    language = lines[0].strip().lstrip("`~").split() if kind == "code" and lines else []
    return bool(language) and language[0].lower() in _DIAGRAMS


def _shows_nothing(kind: Kind, lines: list[str]) -> bool:
    """Tell a code block that quotes no whole line: only template directives, or a first statement cut off."""
    if kind != "code":
        return False
    body = lines[1:]
    closed = bool(body) and closes(body[-1], opening(lines[0]) or "```")
    if closed:
        body = body[:-1]  # its closing fence (a block cut with its chunk has none)
    code = [line for line in _whole_part(body) if line.strip() and line != "…"]
    if all(_DIRECTIVE.match(line) for line in code):
        return True
    bounded = code[:MAX_BLOCK_LINES - 2]
    cut = sum(map(_depth, bounded)) > 0 or (not closed and bool(bounded) and _opens_block(bounded[-1]))
    return cut and not _whole_statements(bounded)


def units(markdown: str) -> list[Unit]:
    """Return a chunk's units in reading order; a block takes the sentence before it ending in ':' as its lead."""
    out: list[Unit] = []
    paragraph = section = 0
    term = ""  # a reference entry's name, on a line of its own before its description
    for group, lines in _group(normalize_markdown(markdown).splitlines()):
        if group == "prose":
            section += any(line.lstrip().startswith("#") for line in lines)
            entry = _TERM.fullmatch(" ".join(lines).strip())
            # Headings name a section; they answer nothing by themselves.
            found = [s.strip() for block in join_wrapped(lines) if not block.lstrip().startswith("#")
                     for s in SENTENCE_END.split(block.strip().lstrip("> ").strip())
                     if is_prose(s) and _WHOLE.match(s.strip())]
            if found and term:  # "`SESSION_COOKIE_PATH`: The path that …": a quote says what it describes
                found[0] = f"{term}: {found[0]}"
            term = entry.group(1) if entry else term if not lines else ""
            paragraph += bool(found)  # a blank line ends a paragraph: one passage per prose group
            out.extend(Unit("sentence", "", s, len(out), paragraph, section) for s in found)
            continue
        kind: Kind = "code" if group == "cut" else group
        if _diagram(kind, lines):
            if out and out[-1].kind == "sentence" and out[-1].body.endswith(":"):
                out.pop()  # its lead-in introduces a picture the quote cannot show
            continue
        if (kind == "table" and len(lines) < 2) or _shows_nothing(kind, lines):
            continue
        lead, term = (f"{term}:", "") if term else ("", "")  # an entry whose description opens with its code
        if not lead and out and out[-1].kind == "sentence" and out[-1].body.endswith(":"):
            lead = out.pop().body
        else:
            paragraph += 1  # a block nothing introduces is a passage of its own
        closed = group != "cut"
        out.append(Unit(kind, lead, _bounded(kind, _outdented(kind, lines, closed), closed), len(out), paragraph,
                        section))
    return out


def _outdented(kind: Kind, lines: list[str], closed: bool = True) -> list[str]:
    """Return a code block or table without the indentation it had inside a list item.

    Quoted on its own, a fence indented four spaces opens no block (the lines render as literal text), and a
    closing fence indented more than its opening one closes nothing: the rest of the answer would render as code.
    So a code block loses its fences' indentation (the opening one's, or the closing one's where a chunk's start
    took the opening one's away), as CommonMark reads its lines, and a table its common one.
    """
    if kind == "table":
        return textwrap.dedent("\n".join(lines)).splitlines()
    if kind != "code":
        return lines
    indent = max(_indent(lines[0]), _indent(lines[-1]) if closed and len(lines) > 1 else 0)
    return [line[min(indent, _indent(line)):] for line in lines]


def _indent(line: str) -> int:
    """Return how many spaces a line starts with."""
    return len(line) - len(line.lstrip(" "))


def closing_lead_in(markdown: str) -> str:
    """Return the sentence a chunk ends on when it introduces a block cut from it ("…using X and Y:"), else ''."""
    found = units(markdown)
    last = found[-1] if found else None
    return last.body if last and last.kind == "sentence" and last.body.endswith(":") \
        and markdown.rstrip().endswith(":") else ""


def opening_block(markdown: str) -> str:
    """Return the list, table or code block a chunk opens with, as written; '' when prose or a heading comes first."""
    groups = [(group, lines) for group, lines in _group(markdown.strip("\n").splitlines()) if lines]
    return "\n".join(groups[0][1]) if groups and groups[0][0] != "prose" else ""


def closing_code(markdown: str) -> str:
    """Return the fenced code block a chunk ends on, as written; '' when prose, a list or a table ends it."""
    groups = [(group, lines) for group, lines in _group(markdown.strip("\n").splitlines()) if lines]
    return "\n".join(groups[-1][1]) if groups and groups[-1][0] in ("code", "cut") else ""


def _fenced(block: str) -> tuple[str, list[str]]:
    """Return a fenced block's opening line and its code lines (without the closing fence)."""
    lines = block.splitlines()
    fence = opening(lines[0]) if lines else None
    if fence is None:
        return "", []
    closed = len(lines) > 1 and closes(lines[-1], fence)
    return lines[0], lines[1:-1] if closed else lines[1:]


def _goes_on(code: list[str]) -> bool:
    """Tell code that goes on past its last line: a bracket left open, or a last line opening a block (`def f():`)."""
    written = [line for line in code if line.strip()]
    return sum(map(_depth, code)) > 0 or (bool(written) and _opens_block(written[-1]))


def _starts_inside(fence: str, code: list[str]) -> bool:
    """Tell code that starts inside code it does not show ("  })", a YAML list's "  - search").

    It closes a bracket it never opened, or its first line is indented past its fence.
    """
    depth = 0
    for line in code:
        depth += _depth(line)
        if depth < 0:
            return True
    first = next((line for line in code if line.strip()), "")
    indent = len(fence) - len(fence.lstrip())
    return len(first) - len(first.lstrip()) > indent


def joined_code(earlier: str, later: str, keep_later: bool = False) -> str:
    """Return two pieces of one code block that chunking parted as one block; '' when they read as two blocks.

    Chunking cuts a long block between lines and fences each piece: a piece that leaves a bracket open, or one that
    starts inside another's (`  })`), shows code that does not run and is quoted cut, or not at all. A quote shows
    at most MAX_BLOCK_LINES of a block, from its start: with `keep_later` (the later piece is the one retrieved)
    only as much of the earlier piece goes before it as leaves the later one whole.
    """
    first, head = _fenced(earlier)
    second, tail = _fenced(later)
    if not first or first.strip() != second.strip() or not (_goes_on(head) or _starts_inside(second, tail)):
        return ""
    while head and not head[-1].strip():
        head.pop()
    if keep_later:
        room = MAX_BLOCK_LINES - 2 - len(tail)
        head = head[-room:] if room > 0 else []
        if not head:
            return ""
    return "\n".join([first, *head, *tail, opening(first) or "```"])
