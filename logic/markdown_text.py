"""Docs-site Markdown reduced to what a reader sees: no comments, bare tags, admonition or quote markers."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from logic.fences import closes, opening, outside

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# An HTML element's opening or closing tag: a name, then attributes. `Vec<T>` in prose is a type, not a tag:
# a tag with no attributes counts only when its name is an HTML element's (two letters or more, lower case).
# An element of one letter is a tag when it closes (`</a>`: no type is written so) or opens one that closes later on
# the line (`<b>bold</b>`; `Option<i>` alone stays).
_TAG = re.compile(r"</?(?:[A-Za-z][\w-]*(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)+\s*/?"
                  r"|[a-z][a-z0-9]+\s*/?)>|</[abipqsu]>|<([abipqsu])>(?=.*</\1>)")
# An empty anchor element in a heading (`### Implementing X <a name="implementing_x"></a>`): the page's own anchor for
# the section, which every site generator keeps, so it becomes the heading's `{#anchor}`.
_HEADING_ANCHOR = re.compile(r"\s*<a\s+(?:name|id)\s*=\s*[\"']([^\"'\s]+)[\"']\s*>\s*</a>\s*$")
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
# A footnote ("[^win]: Requires Colorama on Windows."): the page shows its text below, and the mark where it is
# referred to ("colorful[^win]") as a number; the text is content, the mark is not.
_FOOTNOTE = re.compile(r"^\s{0,3}\[\^[^\]\n]+\]:[ \t]*(.*)$")
# A code span between runs of two or more backticks ("``C()``", "```fit1```") holding no backtick itself: the same
# span as between single ones, which is how the rest of the reading (and a quote's cleaning) expects code spans.
MULTI_TICK = re.compile(r"(?<!`)(`{2,})(?!`)([^`\n]+?)(?<!`)\1(?!`)")
# A code span, kept, or a reference link whose text may wrap onto a second line or hold code spans.
_WRAPPED_REF_LINK = re.compile(r"(`[^`\n]*`)|(?<![\]!\\])\[((?:[^\]\[`\n]|`[^`\n]*`|\n(?![ \t]*\n))+)\]"
                               r"\[[^\]\[\n]*\]")
# A reference definition's label, and a bracketed text that may be a shortcut reference link to one (a code span
# is matched first, so `a[i]` stays code).
_LABEL_DEFINED = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]+\S", re.MULTILINE)
_SHORTCUT_LINK = re.compile(r"(`[^`\n]*`)|(?<![\]!\\\w])\[([^\]\[\n]+)\](?![(\[:])")
# An HTML entity the page renders as its character; not "&lt;", "&gt;" or "&amp;", which would then read as markup.
_ENTITY = re.compile(r"&(?!(?:lt|gt|amp);)(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
# An attribute list ending a line ("… later in your validator.  {#model-before-validator}"), which sets an id or a
# class on the element and shows nothing.
_ATTRIBUTES = re.compile(r"[ \t]*\{:?[ \t]*[#.][\w-]+(?:[ \t]+(?:[#.][\w-]+|[\w-]+=(?:\"[^\"]*\"|[^\s}]+)))*"
                         r"[ \t]*\}[ \t]*$")
# ...or one that sets an id right after the element it marks ("**`locale`**{ #mkdocs-locale }: The locale …").
_ID_ATTRIBUTE = re.compile(r"(?<=[^\s{])\{:?[ \t]*#[\w-]+(?:[ \t]+[#.][\w-]+)*[ \t]*\}")
_FOOTNOTE_MARK = re.compile(r"\[\^[^\]\s]+\](?!:)")
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")
# An image shows no words of the text (its alt text may wrap over lines); `vec![1](x)` is no image.
_IMAGE = re.compile(r"(?<![\w!])!\[[^\]`]*\]\([^)\s]*\)")
_QUOTE = re.compile(r"^(\s*)>(?!>>)[ \t]?")  # not a doctest's `>>>`
# A MyST / Sphinx role: {class}`~pkg.mod.Name`, {func}`pkg.configure`, {any}`str`. The reader sees the code span,
# and a leading `~` shows only the name's last part; `title <target>` shows the title. A code span is matched
# first and kept, so `{module}:{app}` followed by more code is a template in code, not a role.
_ROLE = re.compile(r"(`[^`\n]*`)|\{([a-z][\w:.-]*)\}`(~?)([^`\n]+)`")
_TITLED_TARGET = re.compile(r"^(.*?\S)\s*<[^<>]+>$")
# A definition list's definition (MyST, Pandoc, Python-Markdown's def_list, kramdown): ": text" under its term,
# which is not a list item, heading, quote, table row or fence.
_DEFINITION = re.compile(r"^:[ \t]+(\S.*)$")
_NOT_A_TERM = re.compile(r"^(?:\s|[-+*]\s|[#>|:]|\d+[.)]\s|```|~~~)")
# Roles that Sphinx renders as a link in prose (a page, a label, a glossary term), not as code.
_LINK_ROLES = frozenset({"doc", "ref", "term", "numref", "download", "eq", "abbr"})
# A MyST directive opens with a fence of backticks or colons and a name in braces: ```{note}, :::{versionchanged}
# 14.0.0 Text, ````{code-block} python. Its body ends at a fence of the same character, at least as long.
_DIRECTIVE = re.compile(r"^([ \t]*)(`{3,}|:{3,})\{([\w:.-]+)\}[ \t]*(.*?)\s*$")
# A Docusaurus admonition: `:::tip`, `:::tip[Title]` (v3) or `:::danger Take care` (v2), closed by `:::`. No space
# after the colons: `::: pkg.module` is an mkdocstrings reference, not a box.
_COLON_ADMONITION = re.compile(r"^([ \t]*)(:{3,})([a-z][\w-]*)(?:\[([^\]\n]*)\]|[ \t]+(.*?))?\s*$")
_DIRECTIVE_OPTION = re.compile(r"^\s*:[\w-]+:(?:\s.*)?$")
# Directives Sphinx shows as a code block, with the language it highlights when none is given.
CODE_DIRECTIVES = {"code-block": "", "code": "", "sourcecode": "", "code-cell": "", "doctest": "pycon",
                   "testcode": "python", "testoutput": "", "mermaid": "mermaid"}
# Directives whose body the page does not show as text: navigation, files pulled in, hidden test set-up, media.
HIDDEN_DIRECTIVES = frozenset({"toctree", "include", "literalinclude", "testsetup", "testcleanup", "image",
                               "contents", "raw", "only", "index", "meta", "autosummary"})
# Directives that print their argument as a sentence before the body.
VERSION_DIRECTIVES = {"versionadded": "Added in version", "versionchanged": "Changed in version",
                      "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
# Directives whose argument is a title the reader sees (other arguments are paths or object names).
TITLED_DIRECTIVES = frozenset({"admonition", "topic", "sidebar", "rubric", "dropdown", "card", "tab-item", "tab"})


def role_shown(name: str, target: str) -> tuple[str, bool]:
    """Return the words Sphinx shows for a role (MyST's or reST's) and whether it shows them as code.

    A titled target shows its title; `~a.b.C` shows `C`; a leading `!` (no link) is not shown.
    """
    if titled := _TITLED_TARGET.match(target):
        shown = titled.group(1)
    else:
        target = target.removeprefix("!")
        shown = target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target
    return shown, name.rsplit(":", 1)[-1].lower() not in _LINK_ROLES


def _role(match: re.Match[str]) -> str:
    """Return a role as Sphinx shows it: a link's text as prose, an object's name as a code span."""
    code, name, short, target = match.groups()
    if code is not None:
        return code
    shown, as_code = role_shown(name, short + target)
    return f"`{shown}`" if as_code else shown


def _code_fence(fence: str) -> str:
    """Return the backtick fence a code directive becomes: its own when of backticks, else three."""
    # A four-backtick directive may show a three-backtick example inside it, which must not close it.
    return fence if fence.startswith("`") else "```"


def _directive_head(indent: str, fence: str, name: str, argument: str) -> tuple[str, list[str]]:
    """Return how a directive's body is shown ("code", "hidden" or "text") and the lines that stand for its head."""
    if name in CODE_DIRECTIVES:
        language = argument.split()[0] if argument else CODE_DIRECTIVES[name]
        return "code", [f"{indent}{_code_fence(fence)}{language}"]
    if name in HIDDEN_DIRECTIVES:
        return "hidden", []
    if name in VERSION_DIRECTIVES:
        version, _, said = argument.partition(" ")
        head = f"{VERSION_DIRECTIVES[name]} {version}" if version else VERSION_DIRECTIVES[name]
        return "text", ["", f"{indent}{head}: {said}" if said else f"{indent}{head}.", ""]
    if name in TITLED_DIRECTIVES and argument:
        return "text", ["", f"{indent}{argument}", ""]
    return "text", [""]


def _myst_directives(markdown: str) -> str:
    """Return Markdown with MyST directives as Sphinx shows them, and Docusaurus admonitions as their text.

    Admonitions and version notes leave their text, code directives become fenced code, and navigation, included
    files and hidden test set-up vanish. Option lines (`:caption: x`, or a `---` block) never show.
    """
    if "`{" not in markdown and ":::" not in markdown:  # no directive nor box: most pages, every turn's chunks
        return markdown
    out: list[str] = []
    open_blocks: list[tuple[str, str]] = []  # (fence, how the body is shown), innermost last
    plain: str | None = None  # the fence of an ordinary code block the line is in: nothing in it is a directive
    options: str | None = None  # after a directive's head: "first" line, more "options", or a "yaml" block
    for line in markdown.split("\n"):
        if plain is not None:
            out.append(line)
            plain = None if closes(line, plain) else plain
            continue
        if options == "yaml":
            options = "options" if line.strip() == "---" else options
            continue
        if options and (_DIRECTIVE_OPTION.match(line) or (options == "first" and line.strip() == "---")):
            options = "yaml" if line.strip() == "---" else "options"
            continue
        if options == "options" and not line.strip():  # the blank line that ends the options is not the body's
            options = None
            continue
        options = None
        if open_blocks and closes(line, open_blocks[-1][0]):
            fence, how = open_blocks.pop()
            indent = line[: len(line) - len(line.lstrip())]
            out.extend({"code": [indent + _code_fence(fence)], "text": [""]}.get(how, []))
            continue
        how = open_blocks[-1][1] if open_blocks else "text"
        if how == "code":
            out.append(line)
        elif directive := _DIRECTIVE.match(line):
            indent, fence, name, argument = directive.groups()
            shown, head = _directive_head(indent, fence, name.lower(), argument)
            # Whatever opens inside a hidden block is hidden with it.
            open_blocks.append((fence, "hidden" if how == "hidden" else shown))
            out.extend(head if how != "hidden" else [])
            options = "first"
        elif how != "hidden" and (box := _COLON_ADMONITION.match(line)):
            indent, fence, _, title, said = box.groups()
            open_blocks.append((fence, "text"))
            out.extend(["", f"{indent}{title or said}", ""] if (title or said) else [""])
        elif how != "hidden":
            plain = opening(line)
            out.append(line)
    return "\n".join(out)


def _one_tick(match: re.Match[str]) -> str:
    """Return a code span written between runs of backticks as one between single backticks, its text the same."""
    code = match.group(2)
    code = code[1:-1] if len(code) > 2 and code.startswith(" ") and code.endswith(" ") and code.strip() else code
    return f"`{code}`"


def _link_text(match: re.Match[str]) -> str:
    """Return a code span as written, or a reference link's text."""
    return match.group(1) or match.group(2)


def _entity(match: re.Match[str]) -> str:
    """Return the character an HTML entity stands for, as the page shows it ("&mdash;" is "—")."""
    return html.unescape(match.group(0))


def _outside_code_spans(line: str, change: re.Pattern[str], replacement: str | Callable[[re.Match[str]], str]) -> str:
    """Apply a substitution to a line's text outside inline code spans (`Box<T>` stays as written)."""
    return "".join(p if i % 2 else change.sub(replacement, p) for i, p in enumerate(_INLINE_CODE.split(line)))


def _defines(out: list[str], text: str, continuing: bool, list_end: int) -> bool:
    """Write a definition as a list item led by its term ("- **term**: text"); False when no term stands above it.

    The term is the line above, or above one blank line; a further definition of the same term (`continuing`)
    continues its item. Terms one after another make one list: a blank line back to the item ending at
    `list_end` (the length `out` had after it) goes.
    """
    if continuing:
        out.append(f"  {text}")
        return True
    at = len(out) - 1 - (len(out) > 1 and not out[-1].strip())
    if at < 0 or not out[at].strip() or _NOT_A_TERM.match(out[at]) or (at > 0 and out[at - 1].strip()):
        return False
    term = out[at].strip()
    term = term[2:-2] if term.startswith("**") and term.endswith("**") and len(term) > 4 else term
    term = term.rstrip(":").rstrip()  # "`filter_by_level`:" above its definition: the item gives the colon
    del out[at - 1 if at - 1 == list_end else at:]
    out.append(f"- **{term}**: {text}")
    return True


def normalize_markdown(markdown: str) -> str:
    """Return Markdown as its reader sees it; fenced code is kept as written (after quote markers go).

    HTML comments and tag-only lines vanish, inline tags leave their text, admonition and tab markers give way
    to their title (the body is dedented), `>` quote markers and reference-link brackets go, their text stays;
    a MyST directive reads as Sphinx shows it and a role leaves what it shows (`_myst_directives`, `_role`).
    """
    out: list[str] = []
    fence: str | None = None
    quoted_fence = False  # a code block inside a block quote: its lines lose the quote marker too
    dedent: int | None = None  # the indentation of an admonition's body, removed while it lasts
    defining = False  # the last line written belongs to a definition list's item
    list_end = -1  # len(out) after the last line of a definition list's item
    markdown = _myst_directives(markdown)
    # Comments and `![..](..)` inside fenced code (quoted or indented blocks too) are code. A reference link
    # wrapped over two lines, or holding a code span ("[`rand`\ncrate][randcrate]"), keeps its text.
    text = outside(markdown, lambda part: _WRAPPED_REF_LINK.sub(_link_text, _IMAGE.sub("", _COMMENT.sub("", part))))
    # A shortcut reference link ("set the [locale] parameter", defined by "[locale]: #locale" on the page) shows
    # its text; brackets the page defines no link for are text as written.
    labels = {label.lower() for label in _LABEL_DEFINED.findall(text) if not label.startswith("^")}
    if labels:
        text = outside(text, lambda part: _SHORTCUT_LINK.sub(
            lambda m: m.group(2) if m.group(2) and m.group(2).lower() in labels else m.group(0), part))
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
        if fence is not None:
            out.append(line)
            if closes(line, fence):
                fence = None
            continue
        if opens := opening(line):
            fence, quoted_fence = opens, quoted
            out.append(line)
            continue
        admonition = _ADMONITION.match(line)
        if admonition:
            indent = len(admonition.group(1))
            dedent = indent + 4
            out.extend([admonition.group(1) + admonition.group(2), ""] if admonition.group(2) else [""])
            continue
        if footnote := _FOOTNOTE.match(line):
            out.extend(["", footnote.group(1)])  # a paragraph of its own; its indented lines continue it
            defining = False
            continue
        if _TAG_LINE.match(line) or _REF_DEFINITION.match(line):
            out.append("")  # a paragraph break, as the tag or definition stood between blocks
            defining = False
            continue
        if line.startswith("#"):
            line = _HEADING_ANCHOR.sub(r" {#\1}", line)
        line = MULTI_TICK.sub(_one_tick, line)
        line = _REF_CODE_LINK.sub(r"\1", _ROLE.sub(_role, line))
        line = _outside_code_spans(_outside_code_spans(line, _TAG, ""), _REF_LINK, r"\1")
        line = _outside_code_spans(line, _FOOTNOTE_MARK, "")
        line = _outside_code_spans(line, _ENTITY, _entity)
        if not line.lstrip().startswith("#") and line.strip():  # a heading's `{#anchor}` names its section
            line = _outside_code_spans(_outside_code_spans(line, _ATTRIBUTES, ""), _ID_ATTRIBUTE, "")
            if not line.strip():
                continue  # a line that only set an id: the item or paragraph it follows goes on
        if (definition := _DEFINITION.match(line)) and _defines(out, definition.group(1), defining, list_end):
            defining, list_end = True, len(out)
            continue
        # A definition's indented lines continue it; anything else ends it.
        defining = defining and line[:1].isspace() and bool(line.strip())
        out.append(line)
        list_end = len(out) if defining else list_end
    return "\n".join(out)
