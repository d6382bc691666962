"""Answer-level evaluation figures: keyword recall, answer defects, near-miss vs far-off, selection, per class."""

from __future__ import annotations

import math
import re
import statistics
from typing import Any

from markdown_it import MarkdownIt

from logic.chunking import TABLE_RULE
from logic.fences import closes, opening, span_open
from logic.markdown_text import MULTI_TICK
from logic.not_found import unhedged
from logic.passages import STRINGS_AND_REMARKS


def answer_given(answer: str, status: str) -> str:
    """Return what a reader got as an answer: a refusal's text is none, an unsure answer's lead-in is not part of it."""
    # A refusal quotes the question and names the nearest sections; the hedge repeats the question's ask.
    return unhedged(answer) if status == "grounded" else ""


def keyword_recall(answer: str, keywords: list[str]) -> float | None:
    """Return the share of expected keywords the answer contains, case-insensitive (None without keywords)."""
    if not keywords:
        return None
    lowered = answer.lower()
    return round(sum(k.lower() in lowered for k in keywords) / len(keywords), 4)


def _share(values: list[bool]) -> float | None:
    """Return the share of true values, rounded (None for none)."""
    return round(sum(values) / len(values), 4) if values else None


# An answer holds its keywords when it contains at least half of them, rounded up (1 of 1, 1 of 2, 2 of 3):
# keywords are proxies, not a judge, and a right answer may phrase one of several differently.
HOLD_SHARE = 0.5


def holds_keywords(answer: str, keywords: list[str]) -> bool:
    """Tell whether an answer contains at least HOLD_SHARE of its expected keywords (rounded up)."""
    lowered = answer.lower()
    return sum(k.lower() in lowered for k in keywords) >= math.ceil(HOLD_SHARE * len(keywords))


def turn_right(record: dict[str, Any]) -> bool:
    """Judge a turn as its reader would: the expected status and, for an answer with keywords, holding them."""
    if record["expected"] != "GROUNDED":
        return bool(record["status"] == "not_found")
    keywords = record.get("answer_keywords") or []
    given = answer_given(record.get("answer", ""), record["status"])
    return record["status"] == "grounded" and holds_keywords(given, keywords)


def followups(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Judge conversation turns after the first by their answers, not only by what they retrieved."""
    later = [r for r in records if r["turn"] > 1]
    inscope = [r for r in later if r["expected"] == "GROUNDED"]
    recalls = [r["keyword_recall"] for r in inscope if r.get("keyword_recall") is not None]
    return {"followups_right": sum(turn_right(r) for r in later), "count_followup_turns": len(later),
            "followups_right_share": _share([turn_right(r) for r in later]),
            "followup_answered": _share([r["status"] == "grounded" for r in inscope]),
            "followup_keyword_recall": round(statistics.fmean(recalls), 4) if recalls else None}


# A quoted sentence or block this long said twice is a repeat a reader notices, not a shared short phrase.
_REPEAT_CHARS = 40
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# Docs markup a site's build would have rendered: a MyST directive's fence (```{note}, :::{warning}) or a role.
# A code span (group 1) is matched before a role, so `{module}:{app}` followed by more code is not one.
_MARKUP = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{[\w:.-]+\}|(`[^`\n]*`)|\{[a-z][\w:.-]*\}`[^`\n]+`", re.MULTILINE)
# Markup the page renders, quoted as written: a footnote's mark ("colorful[^win] output"), a reference link's label
# ("[Raw Identifiers][raw-identifiers]"), an attribute list ("{#model-before-validator}"), an HTML entity ("&mdash;"),
# an element's closing tag ("themes</a> available"), a reST cross-reference's target after its title
# ("uses utils.get_value <marshmallow.utils.get_value> to pull").
_PAGE_MARKUP = re.compile(r"\[\^[^\]\s]+\]|\]\[[\w.-]+\]|\{:?\s*#[\w-]+\s*\}|&(?:[a-z]+|#\d+);|</[a-z][a-z0-9]*>"
                          r"|[\w.]+ <[\w.:~-]+\.[\w.:~-]+>")
# A stop after a sentence that already ended inside emphasis or quotes ("… committing code.**.").
_DOUBLE_STOP = re.compile(r"[.!?][*_\"'”’]+\.(?!\.)")
# An inline code span with nothing in it ("located at ``"): the delimiters of an emptied value. Not a
# double-backtick span's own delimiters (``a`b``), which touch a word or another backtick.
_EMPTY_SPAN = re.compile(r"(?<![`\w])`\s*`(?![`\w])")
# "to `true`,." / "true, ." (not an ellipsis ",...", nor a file name after a comma: "e.g., .gitlab-ci.yml").
_COMMA_PERIOD = re.compile(r",\s?\.(?![.\w])")
_ARTICLE_STOP = re.compile(r"\b(?:the|an)\s*[.,;:](?=\s|$)")  # "disabled for the." : a value was cut out
# The note a quoted answer ends with ("_(Quoted from the documentation; …)_") and trailing citation marks.
_NOTE = re.compile(r"\n\s*_\([^\n]*\)_\s*$")
_MARKS = re.compile(r"(?:\s*\[\d+\])+\s*$")
_OPENERS, _CLOSERS = "([{", ")]}"


def _depths(body: str) -> list[int]:
    """Return a code block's bracket depth after each of its lines (brackets in strings and comments aside)."""
    depth, found = 0, []
    for line in body.splitlines():
        code = STRINGS_AND_REMARKS.sub("", line)
        depth += sum(code.count(c) for c in _OPENERS) - sum(code.count(c) for c in _CLOSERS)
        found.append(depth)
    return found


def _cut_code(body: str) -> bool:
    """Tell whether a code block's brackets are left open at its end (a dict or call cut mid-way)."""
    depths = _depths(body)
    return bool(depths) and depths[-1] > 0


def _cut_into(body: str) -> bool:
    """Tell whether a code block starts inside code it does not show: it closes a bracket it never opened ("  })")."""
    return any(depth < 0 for depth in _depths(body))


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def _headless_table(prose: str) -> bool:
    """Tell whether the answer quotes table rows without the header row and rule above them (they render as text)."""
    lines = prose.splitlines()
    starts = [n for n, line in enumerate(lines)
              if _TABLE_ROW.match(line) and not (n and _TABLE_ROW.match(lines[n - 1]))]
    return any(n + 1 >= len(lines) or not TABLE_RULE.match(lines[n + 1]) for n in starts)


def _ends_mid_sentence(answer: str) -> bool:
    """Tell whether the answer's last line of prose stops without finishing its sentence."""
    text = _MARKS.sub("", _NOTE.sub("", answer.rstrip()))
    if not text or text.rstrip().endswith("```"):
        return False
    lines = text.strip().splitlines()
    # An indented line goes on the list item above it ("- When you want\n  to use a value"): the item is the line.
    while len(lines) > 1 and lines[-1][:1].isspace() and lines[-1].strip():
        lines.pop()
    last = lines[-1].strip()
    if not last or re.match(r"([-*+>#|]|\d+[.)])\s?", last):  # a list item, quote, heading, table row
        return False
    if "/" in last.split()[-1]:  # a sentence may end on a bare URL or path
        return False
    return last[-1].isalnum() or last[-1] in ",;:(-"


_COMMONMARK = MarkdownIt("commonmark")


def _misread_fence(answer: str) -> bool:
    """Tell whether a Markdown renderer reads a fence otherwise than it was quoted.

    A fence indented four spaces (code from a list item) is no fence: it shows as text in an indented block. A
    closing fence indented four spaces past its opening closes nothing, and what follows renders as code.
    """
    for token in _COMMONMARK.parse(answer):
        lines = token.content.splitlines()
        if token.type == "code_block" and lines and opening(lines[0].strip()):
            return True
        if token.type == "fence" and any(closes(line, token.markup) for line in lines):
            return True
    return False


# Code lines in a row two quoted blocks share: the same code said twice, not two examples sharing their imports.
_REPEAT_LINES = 6


def _repeats(answer: str) -> bool:
    """Tell whether an answer quotes the same code block (or six lines of it), or the same sentence, twice."""
    blocks = [" ".join(body.split()) for body in _FENCE.findall(answer)]
    said = [" ".join(part.split()) for part in re.split(r"\[\d+\]|\n\s*\n", _FENCE.sub("", answer))]
    quoted = [text for text in [*blocks, *said] if len(text) >= _REPEAT_CHARS]
    seen: set[tuple[str, ...]] = set()
    for body in _FENCE.findall(answer):
        lines = [line.strip() for line in body.splitlines() if line.strip() and line.strip() != "…"]
        runs = {tuple(lines[n:n + _REPEAT_LINES]) for n in range(len(lines) - _REPEAT_LINES + 1)}
        if runs & seen:
            return True
        seen |= runs
    return len(quoted) != len(set(quoted))


def answer_defects(answer: str) -> list[str]:
    """Name what is broken in an answer as a reader would notice it: cut lead-ins, emptied code, fragments, markup."""
    prose = _FENCE.sub("", answer)  # inside code, ":." is code (f"{x:.1%}"), not a cut lead-in
    found = [":." for _ in [0] if ":." in prose]
    found += ["empty code block" for body in _FENCE.findall(answer) if not body.strip()]
    # A span between runs of backticks ("``C()``") is a span: its closing pair after ")" is no emptied one.
    found += ["empty code span" for _ in _EMPTY_SPAN.findall(MULTI_TICK.sub("x", prose))][:1]
    words = _INLINE_CODE.sub("x", prose)  # a code span's own punctuation (`a,.b`) is not prose
    found += [",." for _ in [0] if _COMMA_PERIOD.search(words)]
    found += ["value cut out" for _ in [0] if _ARTICLE_STOP.search(words)]
    found += ["code block cut off" for body in _FENCE.findall(answer) if _cut_code(body)][:1]
    found += ["code block cut at its start" for body in _FENCE.findall(answer) if _cut_into(body)][:1]
    found += ["docs markup" for _ in [0] if any(m.group(1) is None for m in _MARKUP.finditer(answer))
              or _PAGE_MARKUP.search(words)]
    found += ["double stop" for _ in [0] if _DOUBLE_STOP.search(words)]
    # A paragraph leaving an inline code span open: a quote cut inside a span ("the message `already borrowed: …").
    found += ["code span cut" for part in re.split(r"\n\s*\n", prose) if span_open(part)][:1]
    found += ["repeated quote" for _ in [0] if _repeats(answer)]
    found += ["table without its header" for _ in [0] if _headless_table(prose)]
    found += ["fence read as text" for _ in [0] if _misread_fence(answer)]
    if answer.count("```") % 2:
        found.append("code block cut off")
    elif _ends_mid_sentence(answer):
        found.append("ends mid-sentence")
    return found


def answers(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return answer keyword recall over the turns that carry keywords, and answers with each kind of defect."""
    recalls = [r["keyword_recall"] for r in records if r.get("keyword_recall") is not None]
    defects = [answer_defects(r.get("answer", "")) for r in records]
    kinds = sorted({kind for found in defects for kind in found})
    return {"answer_keyword_recall": round(statistics.fmean(recalls), 4) if recalls else None,
            "count_with_keywords": len(recalls), "flagged": sum(bool(r.get("flagged")) for r in records),
            "answers_with_colon_period": sum(":." in found for found in defects),
            "answers_with_defects": sum(bool(found) for found in defects),
            "defects_by_kind": {kind: sum(kind in found for found in defects) for kind in kinds}}


def abstention_split(out: list[dict[str, Any]]) -> dict[str, Any]:
    """Return abstention on near misses (files marked near-miss) apart from far-off questions, and per file.

    A conversation's off-domain turn is neither: it is judged in context (conversation_abstention).
    """
    talk = [r["status"] == "not_found" for r in out if r.get("conversation")]
    out = [r for r in out if not r.get("conversation")]
    near = [r["status"] == "not_found" for r in out if r.get("near_miss")]
    far = [r["status"] == "not_found" for r in out if not r.get("near_miss")]
    sets = sorted({r.get("set", "") for r in out})
    return {"near_miss_abstention": _share(near), "far_off_abstention": _share(far),
            "count_near_miss": len(near), "count_far_off": len(far),
            "conversation_abstention": _share(talk), "count_conversation_out_of_scope": len(talk),
            "abstention_by_set": {s: _share([r["status"] == "not_found" for r in out if r.get("set", "") == s])
                                  for s in sets}}


def selection_figures(chosen: list[dict[str, Any]]) -> dict[str, Any]:
    """Count selection cases answered (of those to answer) and refused (of the unrelated ones)."""
    if not chosen:
        return {}
    answer = [r for r in chosen if r["expected"] == "GROUNDED"]
    refuse = [r for r in chosen if r["expected"] == "NOT_FOUND"]
    recalls = [r["keyword_recall"] for r in answer if r.get("keyword_recall") is not None]
    return {"selection_answered": f"{sum(r['status'] == 'grounded' for r in answer)}/{len(answer)}",
            "selection_refused": f"{sum(r['status'] == 'not_found' for r in refuse)}/{len(refuse)}",
            "selection_keyword_recall": round(statistics.fmean(recalls), 4) if recalls else None}


def by_class(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per answerability class (MTRAG-UN labels), the share answered and the share abstained."""
    classes = sorted({r["class"] for r in records if r.get("class")})
    if not classes:
        return {}
    table = {}
    for name in classes:
        rows = [r for r in records if r.get("class") == name]
        table[name] = {"n": len(rows), "answered": _share([r["status"] == "grounded" for r in rows]),
                       "abstained": _share([r["status"] == "not_found" for r in rows])}
    return {"by_class": table}
