"""The demo site: the project's own docs rendered as HTML pages, each with the widget embedded.

Headings get the anchors ingestion gives their sections, and pages live at the URLs ingestion gives
them with `--base-url /demo`, so the agent's citations link straight to the section on these pages.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

from logic.chunking import slugify, split_front_matter
from tools.settings import get_settings
from tools.sources import page_url

BASE = "/demo"
_EXPLICIT_ID = re.compile(r"\s*\{#([^}\s]+)\}$")


def docs_root() -> Path:
    """Return the folder of Markdown pages the demo shows (`RAG_AGENT_DEMO_DOCS`, else the project's docs)."""
    configured = get_settings().demo_docs
    return Path(configured) if configured else Path(__file__).resolve().parents[3] / "docs"


@lru_cache(maxsize=4)
def _pages(root: Path, stamp: float) -> dict[str, Path]:
    """Map each page's URL path (as ingestion names it) to its file."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.md")):
        source = path.relative_to(root).as_posix()
        if not any(part.startswith(".") for part in source.split("/")):
            found[page_url(source, path.read_text(encoding="utf-8", errors="replace"), BASE)] = path
    return found


def pages() -> dict[str, Path]:
    """Return the demo's pages, re-read when the docs folder changes."""
    root = docs_root()
    return _pages(root, root.stat().st_mtime) if root.is_dir() else {}


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    seen: dict[str, int] = {}

    def heading_ids(state: StateCore) -> None:
        tokens = state.tokens
        for opening, inline in zip(tokens, tokens[1:], strict=False):
            if opening.type != "heading_open":
                continue
            explicit = _EXPLICIT_ID.search(inline.content)
            anchor = explicit.group(1) if explicit else slugify(inline.content)
            if not explicit and anchor:  # numbered like the ingester numbers repeated headings
                count = seen.get(anchor, 0)
                seen[anchor] = count + 1
                anchor = f"{anchor}-{count}" if count else anchor
            if explicit and inline.children:  # `## Heading {#id}` shows as "Heading"
                inline.children[-1].content = _EXPLICIT_ID.sub("", inline.children[-1].content)
            opening.attrSet("id", anchor)

    md.core.ruler.push("heading_ids", heading_ids)
    return md


def _links(body: str) -> str:
    """Point links between Markdown files at the demo pages that render them."""
    return re.sub(r'href="(?!https?:|mailto:|#|/)([^"#]+?)\.mdx?(#[^"]*)?"',
                  lambda m: f'href="{BASE}/{m.group(1)}{m.group(2) or ""}"', body)


def render(url_path: str, widget: str) -> str | None:
    """Return the HTML page for a demo URL path, or None when there is no such page."""
    known = pages()
    home = url_path in {BASE, BASE + "/"}
    stem = url_path.rstrip("/")
    path = known.get(url_path) or known.get(stem) or known.get(stem + "/")  # index pages end in "/"
    if path is None and not home:
        return None
    nav = "\n".join(f'<li><a href="{html.escape(url)}">{html.escape(url[len(BASE) + 1:] or "index")}</a></li>'
                    for url in known)
    if path is None:  # a docs folder without an index page: the home page lists the pages
        title, content = "Contents", f"<h1>Contents</h1><ul>{nav}</ul>"
    else:
        front, body = split_front_matter(path.read_text(encoding="utf-8", errors="replace"))
        title, content = str(front.get("title") or path.stem), _links(_markdown().render(body))
    return _page(html.escape(title), nav, content, widget)


def _page(title: str, nav: str, content: str, widget: str) -> str:
    """Lay a rendered page out with the page list and the widget's script tag."""
    settings = get_settings()
    starters, handoff = html.escape(settings.demo_starters, quote=True), settings.handoff_url
    handoff_attrs = (f' data-handoff-url="{html.escape(handoff, quote=True)}" data-handoff-label="'
                     f'{html.escape(settings.handoff_label, quote=True)}"' if handoff else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · rag-agent docs</title>
<style>
:root {{ color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.55; }}
body {{ margin: 0; display: flex; gap: 2rem; }}
nav {{ padding: 1rem 1.5rem; border-right: 1px solid #8884; min-width: 11rem; }}
nav ul {{ list-style: none; padding: 0; }} main {{ max-width: 48rem; padding: 1rem 1.5rem 6rem; }}
pre {{ overflow-x: auto; padding: .75rem; background: #8881; border-radius: 6px; }}
:target {{ background: #fde68a55; }}
@media (max-width: 700px) {{ body {{ display: block; }} nav {{ border: 0; }} }}
</style></head>
<body><nav aria-label="Pages"><strong>rag-agent docs</strong><ul>{nav}</ul></nav>
<main id="content">{content}</main>
<script src="{widget}" data-starters="{starters}"{handoff_attrs} defer></script>
</body></html>"""
