"""How a reStructuredText page (Sphinx's source format) becomes Markdown: docutils renders it, read as HTML.

Sphinx's own roles and directives are not docutils': each one a page uses is registered before it is parsed,
shown as Sphinx shows it and as the Markdown path shows MyST's (logic/markdown_text.py): an object's name as
a code span, a version note as its sentence, navigation and autodoc stubs as nothing.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from bs4 import BeautifulSoup, Tag
from docutils import nodes
from docutils.core import publish_string
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en

from logic.markdown_text import CODE_DIRECTIVES, HIDDEN_DIRECTIVES, TITLED_DIRECTIVES, VERSION_DIRECTIVES, role_shown
from tools.webpage import html_to_markdown

_SETTINGS = {
    # A page with a markup error is still read: docutils keeps what it could parse and reports nothing; a
    # failure raises (ingest reports that page) instead of docutils printing it and exiting the process.
    "report_level": 5, "halt_level": 5, "warning_stream": False, "traceback": True,
    # `.. include::`, `.. raw::` and a table's `:url:` would read files or pass HTML through: never for ingest.
    "file_insertion_enabled": False, "raw_enabled": False,
    "syntax_highlight": "none", "output_encoding": "unicode", "embed_stylesheet": False, "stylesheet_path": "",
}
_ROLE_USE = re.compile(r"(?<![\w`]):([A-Za-z][\w+.:-]*):`")
_DIRECTIVE_USE = re.compile(r"^[ \t]*\.\.[ \t]+([A-Za-z][\w+.:-]*)::", re.MULTILINE)
# Names docutils itself knows (English), left to it.
_DOCUTILS_ROLES = frozenset(en.roles) | frozenset(en.roles.values())
_DOCUTILS_DIRECTIVES = frozenset(en.directives) | frozenset(en.directives.values())
# Directives that document one object: Sphinx shows the signature, then the body.
_OBJECTS = frozenset({"function", "class", "method", "staticmethod", "classmethod", "attribute", "property", "data",
                      "exception", "decorator", "decoratormethod", "envvar", "option", "confval", "describe",
                      "object", "program"})
# Directives that set where later names live, shown as nothing (Sphinx prints no text for them).
_SILENT = frozenset({"module", "currentmodule", "highlight"})
_FUNCTION_ROLES = frozenset({"func", "meth"})  # Sphinx shows these with "()" after the name
_registered: set[str] = set()
_lock = threading.Lock()
# `Single backticks` take the project's default role: Sphinx projects name one in conf.py (`default_role`: "any",
# "py:obj" and "code" on the sites read so far), each shown as code, a titled target by its title. Docutils' own
# default, a title reference, would show "utils.get_value <marshmallow.utils.get_value>" as written.
_DEFAULT_ROLE = "rag-agent-default"
# A field list opening the page (`:orphan:`, `:tocdepth: 2`) is Sphinx's file-wide metadata, never shown; read by
# docutils it stayed as text ("orphan:") and took the page's title from its first heading.
_METADATA = re.compile(r"\A(?:[ \t]*\n)*(?::[^:`\n]+:(?:[ \t][^\n]*)?(?:\n|\Z)(?:[ \t]+[^\n]*(?:\n|\Z))*)+")


def _sphinx_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: dict[str, Any] | None = None,
                 content: list[str] | None = None) -> tuple[list[Any], list[Any]]:
    """Render a Sphinx role as the MyST path does: a link's text as prose, an object's name as a code span."""
    short = name.rsplit(":", 1)[-1].lower()
    shown, as_code = role_shown(short, text.removeprefix("/") if short == "doc" else text)
    if short in _FUNCTION_ROLES and not text.rstrip().endswith(">") and not shown.endswith(")"):
        shown += "()"  # as Sphinx does, but never after a title the page gives ("app.logger <flask.Flask.logger>")
    return [nodes.literal(rawtext, shown) if as_code else nodes.Text(shown)], []


class _AnyOption(dict[str, Any]):
    """Every option a directive may take, read as text and then ignored (Sphinx's options change no words)."""

    def __missing__(self, key: str) -> Any:
        """Accept an option of any name."""
        return directives.unchanged

    def __bool__(self) -> bool:
        """Say there are options, so docutils separates them from the arguments."""
        return True


class _SphinxDirective(Directive):  # type: ignore[misc]  # docutils ships no type hints
    """A Sphinx directive, shown as the built page shows it: code, a version note, a signature, a body or nothing."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = _AnyOption()

    def run(self) -> list[Any]:
        """Return the nodes the directive stands for."""
        name = self.name.rsplit(":", 1)[-1].lower()
        argument = " ".join(self.arguments)
        if name in HIDDEN_DIRECTIVES or name in _SILENT or name.startswith("auto"):  # autodoc: text is in code
            return []
        if name in CODE_DIRECTIVES:
            code = "\n".join(self.content)
            language = argument.split()[0] if argument else CODE_DIRECTIVES[name]
            return [nodes.literal_block(code, code, classes=["code", language] if language else [])]
        shown: list[Any] = []
        if name in VERSION_DIRECTIVES:
            version, said = ([*argument.split(None, 1), ""])[:2]
            head = f"{VERSION_DIRECTIVES[name]} {version}".strip()
            sentence = nodes.paragraph(text=f"{head}: " if said.strip() else f"{head}.")
            if said.strip():  # the lines right under the directive are its sentence, with roles and code spans
                sentence.extend(self.state.inline_text(said.strip(), self.lineno)[0])
            shown.append(sentence)
        elif name in TITLED_DIRECTIVES and argument:
            shown.append(nodes.paragraph(text=argument))
        body = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, body)
        if name in _OBJECTS and argument:
            # The entry's name on a line of its own, ending in a colon as a term does: a sentence quoted from the
            # description is then led by what it describes (logic/passages.py).
            shown.append(nodes.paragraph("", "", nodes.literal(argument, argument), nodes.Text(":")))
        return [*shown, *body.children]


def _register(text: str) -> None:
    """Register the Sphinx roles and directives a page uses that docutils does not know (once per name)."""
    names = {f"role:{n}" for n in _ROLE_USE.findall(text) if n not in _DOCUTILS_ROLES}
    used = set(_DIRECTIVE_USE.findall(text))
    # Docutils' own contents/include/raw/image/meta are hidden as on the MyST path, and its `class` is Sphinx's
    # object directive there (`rst-class` is docutils'); its code and admonitions are kept.
    names |= {f"directive:{n}" for n in used
              if n not in _DOCUTILS_DIRECTIVES or n in HIDDEN_DIRECTIVES or n in _OBJECTS | _SILENT}
    names.add(f"role:{_DEFAULT_ROLE}")  # an object role like any other Sphinx one: code, a titled target's title
    with _lock:
        for key in names - _registered:
            kind, name = key.split(":", 1)
            if kind == "role":
                roles.register_local_role(name, _sphinx_role)
            else:
                directives.register_directive(name, _SphinxDirective)
            _registered.add(key)


def _as_page_html(html: str) -> str:
    """Return docutils' HTML as a built docs page shows it: code spans as code, notes as text, languages named."""
    soup = BeautifulSoup(html, "lxml")
    for span in soup.select("span.literal"):
        span.name = "code"  # docutils writes ``x`` as a span, which Markdown would lose
    for box in soup.select("aside"):
        box.name = "div"  # a note or topic is the page's text, not site chrome
    for pre in soup.select("pre.code"):
        classes = [c for c in pre.get_attribute_list("class") if c not in ("code", "literal-block", "doctest")]
        if classes and isinstance(pre, Tag):
            pre["class"] = " ".join([*pre.get_attribute_list("class"), f"language-{classes[0]}"])
    return str(soup)


def rst_to_markdown(text: str, name: str = "") -> str:
    """Return a reStructuredText page as Markdown with its title as front matter ('' when it has no text)."""
    _register(text)
    text = f".. default-role:: {_DEFAULT_ROLE}\n\n{_METADATA.sub('', text)}"  # the page's own directive still wins
    html = publish_string(text, source_path=name or None, writer="html5", settings_overrides=_SETTINGS)
    return html_to_markdown(_as_page_html(str(html)))[0]
