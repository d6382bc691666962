"""Docs-site Markdown reduced to what a reader sees: no comments, bare tags, admonition or quote markers."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# An HTML element's opening or closing tag: a name, then attributes. `Vec<T>` in prose is a type, not a tag:
# a tag with no attributes counts only when its name is an HTML element's (two letters or more, lower case).
_TAG = re.compile(r"</?(?:[A-Za-z][\w-]*(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)+\s*/?"
                  r"|[a-z][a-z0-9]+\s*/?)>")
# A line that is nothing but tags (`<Listing number="9-6" file-name="src/main.rs">`, `</div>`).
_TAG_LINE = re.compile(r"^\s*(?:</?[A-Za-z][^<>]*>\s*)+$")
# mkdocs-material / Python-Markdown admonitions and content tabs: `!!! note "Title"`, `??? example`, `=== "Tab"`.
_ADMONITION = re.compile(r"^(\s*)(?:[!?]{3}\+?\s*[\w-]+(?:\s+[\w-]+)*|===)\s*(?:\"([^\"]*)\")?\s*$")
# Reference-style links keep their text: `[text][ref]`, `[text][]`; their definitions (`[ref]: url`) go.
_REF_LINK = re.compile(r"(?<![\]!\\])\[([^\]\[\n]+)\]\[[^\]\[\n]*\]")
# A reference link whose text is one code span (API docs: [`model_construct()`][pydantic.main.BaseModel…]): the
# span is its text. Matched on the whole line, since splitting at code spans would cut it in two.
_REF_CODE_LINK = re.compile(r"(?<![\]!\\])\[(`[^`\n]+`)\]\[[^\]\[\n]*\]")
_REF_DEFINITION = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s+\S+.*$")
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")
# Fenced code blocks, quoted or indented ones too: comments and `![..](..)` in them are code.
_FENCED = re.compile(r"(^[ \t>]*(?:```|~~~).*?(?:^[ \t>]*(?:```|~~~)[^\n]*$|\Z))", re.MULTILINE | re.DOTALL)
# An image shows no words of the text (its alt text may wrap over lines); `vec![1](x)` is no image.
_IMAGE = re.compile(r"(?<![\w!])!\[[^\]`]*\]\([^)\s]*\)")
_QUOTE = re.compile(r"^(\s*)>(?!>>)[ \t]?")  # not a doctest's `>>>`
# A MyST / Sphinx role: {class}`~pkg.mod.Name`, {func}`pkg.configure`, {any}`str`. The reader sees the code span,
# and a leading `~` shows only the name's last part.
_ROLE = re.compile(r"\{[a-z][\w:.-]*\}`(~?)([^`\n]+)`")


def _role(match: re.Match[str]) -> str:
    """Return a role's code span as Sphinx shows it."""
    target = match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)
    return f"`{target}`"


def _outside_code_spans(line: str, change: re.Pattern[str], replacement: str) -> str:
    """Apply a substitution to a line's text outside inline code spans (`Box<T>` stays as written)."""
    return "".join(p if i % 2 else change.sub(replacement, p) for i, p in enumerate(_INLINE_CODE.split(line)))


def normalize_markdown(markdown: str) -> str:
    """Return Markdown as its reader sees it; fenced code is kept as written (after quote markers go).

    HTML comments and tag-only lines vanish, inline tags leave their text, admonition and tab markers give way
    to their title (the body is dedented), `>` quote markers and reference-link brackets go, their text stays;
    a MyST role leaves its code span.
    """
    out: list[str] = []
    fence: str | None = None
    quoted_fence = False  # a code block inside a block quote: its lines lose the quote marker too
    dedent: int | None = None  # the indentation of an admonition's body, removed while it lasts
    text = "".join(p if i % 2 else _IMAGE.sub("", _COMMENT.sub("", p)) for i, p in enumerate(_FENCED.split(markdown)))
    for line in text.splitlines():
        # A quoted paragraph's wrapped lines and its code block read as the page's own.
        if _QUOTE.match(line) and (fence is None or quoted_fence):
            line, quoted = _QUOTE.sub(r"\1", line, count=1), True
        else:
            quoted = False
        if dedent is not None:
            if line.strip() and len(line) - len(line.lstrip()) < dedent:
                dedent = None
            else:
                line = line[dedent:] if line[:dedent].isspace() else line.lstrip()
        opens = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if opens and line.strip().startswith(fence):
                fence = None
            continue
        if opens:
            fence, quoted_fence = opens.group(1), quoted
            out.append(line)
            continue
        admonition = _ADMONITION.match(line)
        if admonition:
            indent = len(admonition.group(1))
            dedent = indent + 4
            out.extend([admonition.group(1) + admonition.group(2), ""] if admonition.group(2) else [""])
            continue
        if _TAG_LINE.match(line) or _REF_DEFINITION.match(line):
            out.append("")  # a paragraph break, as the tag or definition stood between blocks
            continue
        line = _REF_CODE_LINK.sub(r"\1", _ROLE.sub(_role, line))
        out.append(_outside_code_spans(_outside_code_spans(line, _TAG, ""), _REF_LINK, r"\1"))
    return "\n".join(out)
