"""Hostile inputs end within their caps: time and peak memory of the real CLI, measured from outside it.

Each case runs `rag-agent` in a subprocess (hash embedder, no model) and reads the child's own peak RSS
with wait4. Limits are generous for a busy 2-core machine; the address-space guard (1.5 GB) only turns a
regression into a failure instead of a machine out of memory.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from logic.validation import MAX_SELECTION_CHARS
from tests.hostile import Run, Server, drip, run_cli, send

PEAK_MB = 500  # nothing may ask the machine for more


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server("127.0.0.1")
    yield server
    server.close()


def bounded(run: Run, seconds: float) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.seconds < seconds, f"took {run.seconds:.1f}s"
    assert run.peak_mb < PEAK_MB, f"peak RSS {run.peak_mb:.0f} MB"


def gzip_bomb(inflated: int) -> bytes:
    """A gzip member of `inflated` zero bytes (about 1 MB per GB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(2**20)
    return b"".join(packer.compress(block) for _ in range(inflated // len(block))) + packer.flush()


def test_gzip_sitemap_bomb_is_refused_at_its_cap(site: Server, tmp_path: Path) -> None:
    site.routes["/sitemap.xml.gz"] = send(200, gzip_bomb(2**30), "application/gzip")
    run = run_cli(tmp_path / "data", "ingest", f"{site.url}/sitemap.xml.gz", "--retries", "0")
    bounded(run, 120)
    assert run.returncode == 2  # nothing to ingest, and says why
    assert "inflates to more than" in run.stderr


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_page_dripping_one_byte_at_a_time_ends_at_the_page_cap(site: Server, tmp_path: Path,
                                                                   headers_too: bool) -> None:
    site.routes["/docs/"] = partial(drip, headers_too=headers_too)
    run = run_cli(tmp_path / "data", "ingest", f"{site.url}/docs/", "--page-seconds", "3", "--timeout", "10",
                  "--retries", "1")
    bounded(run, 90)
    assert run.returncode == 2
    assert "time limit" in run.stderr


def test_a_slow_site_ends_at_the_crawl_cap(site: Server, tmp_path: Path) -> None:
    urls = [f"{site.url}/p{i}/" for i in range(40)]
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    site.routes["/sitemap.xml"] = send(200, f"<urlset>{entries}</urlset>".encode(), "application/xml")
    site.routes["/p0/"] = send(200, b"<html><body><main><h1>Fast</h1><p>One fast page.</p></main></body></html>")
    for i in range(1, 40):  # 39 pages of 2 s each, 2 at a time: about 40 s without the crawl cap
        site.routes[f"/p{i}/"] = partial(drip, every=0.2)
    run = run_cli(tmp_path / "data", "ingest", f"{site.url}/sitemap.xml", "--page-seconds", "2",
                  "--crawl-seconds", "6", "--concurrency", "2", "--retries", "0")
    bounded(run, 35)
    assert run.returncode == 0, run.stderr
    assert "crawl time limit" in run.stderr


def test_context_from_dev_zero_is_refused_after_reading_the_cap(tmp_path: Path) -> None:
    run = run_cli(tmp_path / "data", "ask", "--context", "/dev/zero", "What is this?")
    bounded(run, 60)
    assert run.returncode == 2
    assert "longer than" in run.stderr and "/dev/zero" in run.stderr


def test_a_100_mb_context_file_is_not_read_whole(tmp_path: Path) -> None:
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_text("x" * (MAX_SELECTION_CHARS + 10_000))  # just over the limit: refused the same way
    with big.open("w") as handle:  # 100 MB of text, written once
        block = "selected text line\n" * 5_000
        for _ in range(100_000_000 // len(block)):
            handle.write(block)
    baseline = run_cli(tmp_path / "data", "ask", "--context", str(small), "What is this?")
    run = run_cli(tmp_path / "data", "ask", "--context", str(big), "What is this?")
    bounded(run, 60)
    assert baseline.returncode == run.returncode == 2 and "longer than" in run.stderr
    # Reading 100 MB as text would add 100-200 MB to the peak; a capped read adds nothing measurable.
    assert run.peak_mb < baseline.peak_mb + 40, (run.peak_mb, baseline.peak_mb)


def test_front_matter_alias_bomb_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    levels = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    bomb = "---\n" + "\n".join(levels) + f"\ntitle: [{','.join(['*a7'] * 9)}]\n---\n\n# Lidar\n\nA lidar page.\n"
    assert len(bomb) < 1000
    (docs / "bomb.md").write_text(bomb)
    run = run_cli(tmp_path / "data", "ingest", str(docs), "--json")
    bounded(run, 120)
    assert run.returncode == 0, run.stderr
    assert "aliases are not allowed" in run.stdout


def test_a_huge_markdown_file_is_skipped_unread(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Sensors\n\nLidar measures distance.\n")
    with (docs / "huge.md").open("wb") as handle:  # 3 GB, sparse: costs no disk
        handle.truncate(3 * 2**30)
    run = run_cli(tmp_path / "data", "ingest", str(docs))
    bounded(run, 120)
    assert run.returncode == 0, run.stderr
    assert "huge.md" in run.stderr and "not read" in run.stderr


def test_the_peak_memory_measured_is_the_cli_s_own_not_the_test_process_s(tmp_path: Path) -> None:
    # A test process grown large (in-process tests before this one) must not show up as the CLI's peak.
    ballast = bytearray(700 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page so it is resident
    run = run_cli(tmp_path / "data", "--help")
    assert run.returncode == 0 and "usage: rag-agent" in run.stdout
    assert 0 < run.peak_mb < 300, run.peak_mb
    del ballast
