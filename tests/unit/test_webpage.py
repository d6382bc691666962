"""HTML to Markdown: main content only, headings with their ids, code as fenced blocks."""

from __future__ import annotations

from tests.unit.site import NOISE, PAGES, page_html
from tools.crawl import parse_sitemap, selected
from tools.sources import page_url, url_source
from tools.webpage import html_to_markdown


def test_docusaurus_page_keeps_content_headings_and_code() -> None:
    markdown, links = html_to_markdown(page_html(*PAGES["docs/module-1/setup"]), "http://h/docs/module-1/setup/")
    assert markdown.startswith("---\ntitle: Setup\n---\n\n# Setup\n")
    assert "## Install ROS 2 {#install-ros}" in markdown
    assert "### Verify the install {#verify-the-install}" in markdown
    assert "```bash\nsudo apt install ros-humble-desktop\n" in markdown
    assert not [n for n in NOISE if n in markdown]
    assert "http://h/docs/module-1/intro/" in links  # the navigation still feeds a crawl


def test_page_without_text_converts_to_nothing() -> None:
    assert html_to_markdown("<html><body><nav>Menu</nav></body></html>")[0] == ""


def test_sitemap_and_index_are_told_apart() -> None:
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    assert parse_sitemap(f"<urlset {ns}><url><loc> http://h/a </loc></url></urlset>".encode()) == (["http://h/a"], [])
    index = f"<sitemapindex {ns}><sitemap><loc>http://h/s.xml</loc></sitemap></sitemapindex>".encode()
    assert parse_sitemap(index) == ([], ["http://h/s.xml"])


def test_include_and_exclude_globs() -> None:
    assert selected("http://h/docs/a/", ["/docs/*"], [])
    assert not selected("http://h/blog/a/", ["/docs/*"], [])
    assert not selected("http://h/docs/tags/x/", [], ["*/tags/*"])


def test_url_and_path_names() -> None:
    assert url_source("http://h/docs/module-1/intro/", "http://h/docs/") == "module-1/intro"
    assert url_source("http://h/", "http://h/") == "index"
    assert page_url("guide/index.md", "# G\n", "https://d.io") == "https://d.io/guide"
    assert page_url("guide/a.md", "---\nid: custom\n---\n", "https://d.io") == "https://d.io/guide/custom"
    assert page_url("guide/a.md", "---\nslug: /top\n---\n", "https://d.io/") == "https://d.io/top"
