"""A small generated Docusaurus-like site served from 127.0.0.1 by a thread, with faults on demand."""

from __future__ import annotations

import email.utils
import hashlib
import threading
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHROME_TOP = """<!doctype html><html><head><meta charset="utf-8"><title>{title} | Robot Book</title></head><body>
<nav class="navbar"><a href="/">Robot Book</a> <a href="/docs/module-1/intro/">Navbar Tutorials</a></nav>
<div class="main-wrapper"><aside class="theme-doc-sidebar-container"><ul>
<li><a href="/docs/module-1/intro/">Sidebar Introduction</a></li>
<li><a href="/docs/module-1/setup/">Sidebar Setup</a></li>
<li><a href="/docs/broken/">Sidebar Broken link</a></li></ul></aside>
<main><div class="container"><article><nav class="theme-doc-breadcrumbs">Breadcrumb Home</nav>
<div class="theme-doc-markdown markdown"><header><h1>{title}</h1></header>
"""
CHROME_BOTTOM = """</div><footer class="theme-doc-footer"><a class="theme-edit-this-page" href="https://example.com/edit">
Edit this page</a></footer><nav class="pagination-nav"><a href="/docs/module-1/setup/">Next Page Setup</a></nav>
</article></div></main></div><footer class="footer">Copyright Footer Robot Book Inc</footer></body></html>
"""
NOISE = ["Navbar Tutorials", "Sidebar Introduction", "Breadcrumb Home", "Edit this page", "Next Page Setup",
         "Copyright Footer", "Copy"]


def heading(level: int, text: str, anchor: str) -> str:
    """Render a heading the way Docusaurus does: an id and a hash link with a zero-width space."""
    return (f'<h{level} class="anchor anchorWithStickyNavbar" id="{anchor}">{text}'
            f'<a href="#{anchor}" class="hash-link" aria-label="Direct link to {text}">&#8203;</a></h{level}>\n')


def code(language: str, lines: list[str]) -> str:
    """Render a code block the way Docusaurus does: token lines, a language class and a copy button."""
    body = "".join(f'<span class="token-line"><span class="token plain">{line}</span><br></span>' for line in lines)
    return (f'<div class="language-{language} codeBlockContainer"><div class="codeBlockContent">'
            f'<pre class="prism-code language-{language}"><code>{body}</code></pre>'
            '<div class="buttonGroup"><button type="button">Copy</button></div></div></div>\n')


PAGES = {
    "docs/module-1/intro": ("Introduction", "<p>Robots sense the world and act on it with ROS 2 nodes.</p>\n"
                            + heading(2, "Why ROS 2", "why-ros-2")
                            + "<p>ROS 2 brings real-time communication through DDS middleware.</p>\n"),
    "docs/module-1/setup": ("Setup", "<p>Prepare an Ubuntu workstation before installing anything.</p>\n"
                            + heading(2, "Install ROS 2", "install-ros")
                            + "<p>Install the Humble distribution from the apt repository.</p>\n"
                            + code("bash", ["sudo apt install ros-humble-desktop", "source /opt/ros/humble/setup.bash"])
                            + heading(3, "Verify the install", "verify-the-install")
                            + "<p>Run the talker demo to verify the middleware works.</p>\n"),
    "docs/module-2/sensors": ("Sensors", "<p>Lidar and depth cameras give a robot geometry.</p>\n"
                              + heading(2, "Lidar", "lidar") + "<p>A lidar measures distance with laser pulses.</p>\n"),
}


def page_html(title: str, body: str) -> str:
    """Wrap a page body in the site chrome."""
    return CHROME_TOP.format(title=title) + body + CHROME_BOTTOM


def write_site(root: Path, port: int, pages: dict[str, tuple[str, str]] = PAGES,
               lastmod: dict[str, str] | None = None) -> None:
    """Write the pages, a PDF, a sitemap index and a sitemap that also lists a broken link and the PDF.

    `lastmod` gives pages (by path) a `<lastmod>` in the sitemap.
    """
    for path, (title, body) in pages.items():
        (root / path).mkdir(parents=True, exist_ok=True)
        (root / path / "index.html").write_text(page_html(title, body), encoding="utf-8")
    (root / "files").mkdir(exist_ok=True)
    (root / "files" / "manual.pdf").write_bytes(b"%PDF-1.4 not a web page")
    base = f"http://127.0.0.1:{port}"
    locs = [f"{base}/{path}/" for path in pages] + [f"{base}/docs/broken/", f"{base}/files/manual.pdf"]
    stamps = {f"{base}/{path}/": f"<lastmod>{stamp}</lastmod>" for path, stamp in (lastmod or {}).items()}
    urls = "".join(f"<url><loc>{loc}</loc>{stamps.get(loc, '')}</url>" for loc in locs)
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    (root / "sitemap-docs.xml").write_text(f'<?xml version="1.0"?><urlset {ns}>{urls}</urlset>')
    (root / "sitemap.xml").write_text(
        f'<?xml version="1.0"?><sitemapindex {ns}><sitemap><loc>{base}/sitemap-docs.xml</loc></sitemap></sitemapindex>')


class Site:
    """A served folder; `faults` maps a path to a list of status codes to answer before serving it.

    `validators` None serves pages as http.server does (Last-Modified, If-Modified-Since honoured); a set
    serves them with only those of "etag" and "last-modified", honouring the matching conditional request.
    """

    def __init__(self, root: Path, validators: set[str] | None = None) -> None:
        self.root, self.faults, self.hits = root, dict[str, list[int]](), Counter[str]()
        self.validators = validators
        self.conditional, self.not_modified = Counter[str](), Counter[str]()  # by path
        handler = partial(_Handler, self, directory=str(root))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


class _Handler(SimpleHTTPRequestHandler):
    def __init__(self, site: Site, *args: Any, **kwargs: Any) -> None:
        self.site = site
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:  # noqa: N802 - http.server's hook name
        self.site.hits[self.path] += 1
        if "If-None-Match" in self.headers or "If-Modified-Since" in self.headers:
            self.site.conditional[self.path] += 1
        pending = self.site.faults.get(self.path)
        if pending:
            status = pending.pop(0)
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        page = Path(self.translate_path(self.path)) / "index.html"
        if self.site.validators is not None and page.is_file():
            self._page(page.read_bytes(), email.utils.formatdate(page.stat().st_mtime, usegmt=True))
            return
        super().do_GET()

    def send_response(self, code: int, message: str | None = None) -> None:
        if code == 304:
            self.site.not_modified[self.path] += 1
        super().send_response(code, message)

    def _page(self, body: bytes, modified: str) -> None:
        """Serve a page with the chosen validators, or 304 when the request's validator still matches."""
        etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        wanted = self.site.validators or set()
        headers = {"ETag": etag} if "etag" in wanted else {}
        if "last-modified" in wanted:
            headers["Last-Modified"] = modified
        same = (headers.get("ETag") and self.headers.get("If-None-Match") == etag) or \
            (headers.get("Last-Modified") and self.headers.get("If-Modified-Since") == modified)
        self.send_response(304 if same else 200)
        if not same:
            headers |= {"Content-Type": "text/html; charset=utf-8", "Content-Length": str(len(body))}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not same:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        return
