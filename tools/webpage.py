"""How an HTML page becomes Markdown: keep the main content, drop site chrome, keep heading ids and code."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urldefrag, urljoin

import yaml
from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

# Where the page's own text lives, most specific first: Docusaurus, then common themes, then HTML5.
_MAIN_SELECTORS = (
    ".theme-doc-markdown", "article .markdown", "article", "main", "[role=main]", "#content", ".content", "body",
)
# Site chrome and widgets that are never part of a page's text.
_NOISE_SELECTORS = (
    "script", "style", "noscript", "template", "iframe", "svg", "button", "form", "input", "select",
    "nav", "aside", "footer", "[role=navigation]", "[role=banner]",
    "[role=contentinfo]", "[aria-hidden=true]", "a.hash-link", ".hash-link", "a.headerlink", ".theme-edit-this-page",
    ".theme-last-updated", ".theme-doc-footer", ".theme-doc-breadcrumbs", ".theme-doc-toc-mobile",
    ".theme-doc-sidebar-container", ".table-of-contents", ".pagination-nav", ".breadcrumbs", ".sidebar",
    ".toc", ".navbar", ".skip-link", ".edit-this-page", ".copyright",
)
_LANGUAGE = re.compile(r"\blanguage-([\w+#-]+)")
_INVISIBLE = str.maketrans("", "", "\u200b\u200c\u200d\ufeff")
_BLANK_RUNS = re.compile(r"\n{3,}")


class _Converter(MarkdownConverter):
    """Markdownify with ATX headings that carry their id as Docusaurus `{#id}` syntax."""

    def convert_hN(self, n: int, el: Any, text: str, parent_tags: Any) -> str:  # noqa: N802 - markdownify's hook name
        """Write `## Heading {#id}` so the chunker anchors to the site's own heading id."""
        heading = re.sub(r"\s+", " ", text.translate(_INVISIBLE)).strip()
        if "_inline" in parent_tags or not heading:
            return heading
        anchor = el.get("id") or _section_id(el) if isinstance(el, Tag) else None
        suffix = f" {{#{anchor}}}" if anchor else ""
        return f"\n\n{'#' * max(1, min(6, n))} {heading}{suffix}\n\n"


    def convert_br(self, el: Any, text: str, parent_tags: Any) -> str:
        """Keep a line break inside code as a plain newline (no Markdown hard-break spaces)."""
        return "\n" if "pre" in parent_tags else str(super().convert_br(el, text, parent_tags))  # type: ignore[misc]


def _section_id(heading: Tag) -> str | None:
    """Return the id of the section a heading opens (Sphinx and docutils put it there, not on the heading)."""
    parent = heading.parent
    if not isinstance(parent, Tag) or heading is not parent.find(True):
        return None
    if parent.name == "section" or "section" in parent.get_attribute_list("class"):
        found = parent.get("id")
        return found if isinstance(found, str) else None
    return None


def _code_language(el: Tag) -> str:
    """Return the code block's language from `language-*` classes on the pre, its code or its container."""
    for node in (el, el.find("code"), el.parent, el.parent.parent if el.parent else None):
        if isinstance(node, Tag):
            match = _LANGUAGE.search(" ".join(node.get_attribute_list("class") or []))
            if match:
                return match.group(1)
    return ""


def _main_content(soup: BeautifulSoup) -> Tag:
    """Return the element holding the page's own text, with navigation and widgets removed."""
    main = next((found for sel in _MAIN_SELECTORS if isinstance(found := soup.select_one(sel), Tag)), soup)
    for selector in _NOISE_SELECTORS:
        for node in main.select(selector):
            node.decompose()
    # A page <header> is site chrome, but Docusaurus wraps the page's own h1 in one.
    for header in main.find_all("header"):
        if isinstance(header, Tag) and not header.find(["h1", "h2", "h3"]):
            header.decompose()
    return main


def _title(soup: BeautifulSoup, main: Tag) -> str:
    """Return the page title: its first h1, else the <title> without the site name."""
    h1 = main.find("h1")
    if isinstance(h1, Tag) and h1.get_text(strip=True):
        return h1.get_text(" ", strip=True).translate(_INVISIBLE)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    return re.split(r"\s+[|·–—-]\s+", title)[0].strip()


def _absolute(page_url: str, href: str) -> str:
    """Return the link as an absolute URL without its fragment; one that cannot be joined as written.

    The crawler reports a link it cannot use; one unparseable href must not cost the page its text.
    """
    try:
        return urldefrag(urljoin(page_url, href))[0]
    except ValueError:  # urljoin refuses e.g. `http://[::1/x` (an unclosed IPv6 bracket)
        return href


def html_to_markdown(html: str | bytes, page_url: str = "") -> tuple[str, list[str]]:
    """Return the page as Markdown with its title as front matter ('' when it has no text) and its links."""
    soup = BeautifulSoup(html, "lxml")
    # Links are read before the chrome is removed: the navigation is how a crawl finds pages.
    hrefs = (a.get("href") for a in soup.find_all("a"))
    found = [_absolute(page_url, h.strip()) for h in hrefs if isinstance(h, str) and h.strip()]
    main = _main_content(soup)
    title = _title(soup, main)
    body = _Converter(heading_style="ATX", code_language_callback=_code_language, bullets="-",
                      escape_underscores=False, escape_asterisks=False).convert_soup(main)
    body = _BLANK_RUNS.sub("\n\n", body.translate(_INVISIBLE)).strip()
    if not body:
        return "", found
    front = yaml.safe_dump({"title": title}, allow_unicode=True).strip() if title else ""
    return (f"---\n{front}\n---\n\n{body}\n" if front else f"{body}\n"), found
