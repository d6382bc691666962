"""A site full of hostile pages (issue 23 points 4, 6, 7, 9): `ingest --json` ends within its deadlines,
indexes only the pages in scope, reports every refused page with its reason, and keeps no password.

The server resolves paths as a lenient file server does (`/docs/%2e%2e/private/` is `/private/`), so a
path rule that is bypassed shows up as a hit on a private page. Pages are generated here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile import Run, Server, run_cli, send

PASSWORD = "pw-Zq81-secret"
PEAK_MB = 500


def page(title: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    anchors = "".join(f'<a href="{link}">{title} link</a> ' for link in links)
    return (f"<html><body><main><h1>{title}</h1><p>{title} explains how the lidar driver publishes point "
            f"clouds.</p>{anchors}</main></body></html>").encode()


def nested_tags(depth: int = 300_000) -> bytes:
    """One page of `depth` nested inline tags (about 2 MB): minutes of parsing in-process."""
    inline = b"<b>" * depth + b"deep" + b"</b>" * depth
    return b"<html><body><main><h1>Deep</h1><p>" + inline + b"</p></main></body></html>"


def big_table(rows: int = 90_000) -> bytes:
    """One 4.9 MB table (under the 5 MB page cap): minutes and gigabytes of parsing in-process."""
    body = b"".join(b"<tr><td>cell %d</td><td>value</td><td>more</td></tr>" % i for i in range(rows))
    return b"<html><body><main><h1>Table</h1><table>" + body + b"</table></main></body></html>"


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server("127.0.0.1", resolve=True, login=f"reader:{PASSWORD}")
    server.routes.update({
        "/robots.txt": send(200, b"User-agent: *\nDisallow: /docs/internal/\n", "text/plain"),
        "/docs/": send(200, page("Home", [
            "/docs/guide/", "/docs/%2e%2e/private/x.html", "/docs/x/%2e%2e/internal/a.html", "/docs//internal/b.html",
            "/docs/a&#127;b.html", "/docs/bounce/", "/docs/moved/", "/docs/deep/", "/docs/table/", "http://[::1/x"])),
        "/docs/guide/": send(200, page("Guide")),
        "/docs/bounce/": send(302, headers={"Location": "http:\\\\127.0.0.1\\x"}),
        "/docs/moved/": send(302, headers={"Location": "/private/y.html"}),
        "/docs/deep/": send(200, nested_tags()),
        "/docs/table/": send(200, big_table()),
        "/private/x.html": send(200, page("Private payroll")),
        "/private/y.html": send(200, page("Private payroll")),
        "/docs/internal/a.html": send(200, page("Internal roadmap")),
        "/docs/internal/b.html": send(200, page("Internal roadmap")),
    })
    yield server
    server.close()


def bounded(run: Run, seconds: float) -> dict:  # type: ignore[type-arg]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.seconds < seconds, f"took {run.seconds:.1f}s"
    assert run.peak_mb < PEAK_MB, f"peak RSS {run.peak_mb:.0f} MB"
    report: dict = json.loads(run.stdout)  # type: ignore[type-arg]
    return report


def test_hostile_site_is_ingested_in_scope_within_deadlines_and_without_the_password(site: Server,
                                                                                     tmp_path: Path) -> None:
    data = tmp_path / "data"
    url = site.url.replace("http://", f"http://reader:{PASSWORD}@") + "/docs/"
    run = run_cli(data, "ingest", url, "--json", "--page-seconds", "4", "--retries", "0", "--concurrency", "2",
                  timeout=150)
    report = bounded(run, 120)
    origin = site.url
    # Only the two pages in scope are indexed; nothing private was even requested.
    assert report["added"] == 2, report
    assert not site.hits["/private/x.html"] and not site.hits["/private/y.html"]
    assert not site.hits["/docs/internal/a.html"] and not site.hits["/docs/internal/b.html"]
    skipped, failed = report["skipped"], report["failed"]
    assert "outside /docs/" in skipped[f"{origin}/private/x.html"]
    assert "robots.txt" in skipped[f"{origin}/docs/internal/a.html"]
    moved = skipped[f"{origin}/docs/moved/"]  # refused before /private/y.html was requested
    assert "refused redirect" in moved and "outside /docs/" in moved
    assert "invalid URL" in failed["bounce"] and "Invalid IPv6" in skipped["http://[::1/x"]
    assert "HTTP 404" in failed["a%7Fb"]
    for slow in ("deep", "table"):  # stopped at the page's deadline (or its memory cap), reported
        assert "cannot parse" in failed[slow], failed
    # The password was sent (the site needs it) but is in no output and no file of the index.
    assert site.authorized and PASSWORD not in run.stdout + run.stderr
    for path in data.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path
            assert b"reader:" not in path.read_bytes(), path


def test_parsing_is_bounded_by_the_crawl_deadline(tmp_path: Path) -> None:
    server = Server("127.0.0.1")
    sitemap = f"<urlset><url><loc>{server.url}/ok/</loc></url><url><loc>{server.url}/table/</loc></url></urlset>"
    server.routes.update({"/sitemap.xml": send(200, sitemap.encode(), "application/xml"),
                          "/ok/": send(200, page("Guide")), "/table/": send(200, big_table())})
    try:
        run = run_cli(tmp_path / "data", "ingest", f"{server.url}/sitemap.xml", "--json", "--page-seconds", "600",
                      "--crawl-seconds", "6", "--retries", "0", timeout=150)
    finally:
        server.close()
    report = bounded(run, 90)
    assert report["added"] == 1 and "cannot parse" in report["failed"]["table"], report


def test_robots_txt_answering_503_refuses_the_site_and_says_why(tmp_path: Path) -> None:
    server = Server("127.0.0.1", {"/robots.txt": send(503, b"down"), "/docs/": send(200, page("Home"))})
    try:
        run = run_cli(tmp_path / "data", "ingest", f"{server.url}/docs/", "--json", "--retries", "0", timeout=150)
    finally:
        server.close()
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert not server.hits["/docs/"]  # RFC 9309: a 5xx robots.txt means complete disallow
    assert "robots.txt answered HTTP 503" in run.stderr and "RFC 9309" in run.stderr
