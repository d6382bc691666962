"""The `rag-agent ingest` command: index a folder or a site, report what changed and what was not indexed."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from graph.context import Context
from rag_agent.cli.output import dump_json
from tools.settings import get_settings


def add_command(sub: Any) -> None:
    """Add `ingest` and its options to the command line."""
    ingest = sub.add_parser("ingest", help="index a folder (.md/.mdx/.rst/.ipynb/.html), a site root URL "
                                           "or a sitemap.xml URL")
    ingest.add_argument("path", help="folder, file, http(s) site root or sitemap URL")
    ingest.add_argument("--base-url", default="", help="site URL the pages are published under")
    ingest.add_argument("--recreate", action="store_true", help="rebuild the collection from scratch")
    ingest.add_argument("--retrieval", choices=["hybrid", "dense"],
                        help="hybrid (dense + BM25 keywords, fused) or dense only; default: the collection's "
                             "current mode, hybrid for a new one; changing it needs --recreate")
    ingest.add_argument("--include", action="append", default=[], metavar="GLOB", help="only URLs/paths matching")
    ingest.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip URLs/paths matching")
    ingest.add_argument("--chunk-tokens", type=int, default=200, help="chunk size in tokens (default 200)")
    ingest.add_argument("--chunk-overlap", type=int, default=0, help="tokens repeated across a cut (default 0)")
    ingest.add_argument("--concurrency", type=int, default=4, help="parallel page fetches (default 4)")
    ingest.add_argument("--timeout", type=float, default=15.0, help="seconds per HTTP read or connect (default 15)")
    ingest.add_argument("--retries", type=int, default=3, help="retries on 429/5xx/connection errors (default 3)")
    ingest.add_argument("--page-seconds", type=float, default=60.0,
                        help="total seconds per page, retries included (default 60)")
    ingest.add_argument("--crawl-seconds", type=float, default=3600.0,
                        help="total seconds for fetching the whole site (default 3600)")
    ingest.add_argument("--max-pages", type=int, default=5000, help="pages fetched at most (default 5000)")
    ingest.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _collect(args: argparse.Namespace, known: dict[str, Any]) -> Any:
    """Gather the documents of the folder or site the arguments name (`known`: its pages as last indexed)."""
    from logic.errors import InvalidInputError
    from tools.crawl import Fetcher
    from tools.sources import collect

    if min(getattr(args, "page_seconds", 60.0), getattr(args, "crawl_seconds", 3600.0)) <= 0 \
            or getattr(args, "max_pages", 5000) < 1:
        raise InvalidInputError("--page-seconds and --crawl-seconds must be positive and --max-pages at least 1")
    fetcher = Fetcher(concurrency=max(1, getattr(args, "concurrency", 4)), timeout=getattr(args, "timeout", 15.0),
                      retries=max(0, getattr(args, "retries", 3)), page_seconds=getattr(args, "page_seconds", 60.0),
                      crawl_seconds=getattr(args, "crawl_seconds", 3600.0))
    return collect(str(args.path), args.base_url, getattr(args, "include", []), getattr(args, "exclude", []),
                   fetcher, progress=sys.stderr.isatty() and not getattr(args, "json", False),
                   max_pages=getattr(args, "max_pages", 5000), known=known)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Index a folder or site and print what changed; what was not indexed, and why, goes to stderr."""
    from logic.errors import InvalidInputError
    from logic.urls import strip_credentials
    from logic.validation import printable
    from tools import pagecache
    from tools.embeddings import get_embeddings, resolve_name
    from tools.ingest import Settings, ingest

    name, as_json = resolve_name(ctx.embedding_model), getattr(args, "json", False)
    tokens, overlap = getattr(args, "chunk_tokens", 200), getattr(args, "chunk_overlap", 0)
    if not 32 <= tokens <= 2048 or not 0 <= overlap < tokens // 2:
        raise InvalidInputError("--chunk-tokens must be 32-2048 and --chunk-overlap 0 to less than half of it")
    data_dir = Path(get_settings().data_dir)
    # --recreate rebuilds from every page, so nothing may be skipped as unchanged.
    known = {} if args.recreate else pagecache.load(data_dir, ctx.collection, pagecache.chunking(tokens, overlap))
    found = _collect(args, known)
    if not as_json:  # URLs and reasons come from the site: nothing in them may drive the terminal
        for where, reason in {**found.failed, **found.skipped}.items():
            print(printable(f"rag-agent: skipped {where}: {reason}"), file=sys.stderr)
        for where, problem in found.problems.items():
            print(printable(f"rag-agent: warning: {where}: {problem}"), file=sys.stderr)
    report = ingest(found, data_dir=data_dir, collection=ctx.collection,
                    embeddings=get_embeddings(name),
                    embedding_model=name, recreate=args.recreate,
                    source_root=strip_credentials(str(args.path)),  # the manifest is no place for a password
                    settings=Settings(chunk_tokens=tokens, chunk_overlap=overlap,
                                      progress=sys.stderr.isatty() and not as_json,
                                      retrieval=getattr(args, "retrieval", None)))
    if as_json:
        print(dump_json({**dataclasses.asdict(report), "collection": ctx.collection, "embedding_model": name}))
        return 0
    for warning in report.warnings:
        print(printable(f"rag-agent: warning: {warning}"), file=sys.stderr)
    for note in report.notes:
        print(f"rag-agent: note: {note}", file=sys.stderr)
    for source, sentences in report.flagged.items():  # in the JSON report as `flagged`
        print(printable(f"rag-agent: warning: {source} contains text addressed to an AI model (indexed as data, "
                        f"never quoted in answers): {' | '.join(sentences)}"), file=sys.stderr)
    print(f"added {report.added}, updated {report.updated}, removed {report.removed}, "
          f"unchanged {report.unchanged} documents; {len(report.failed)} failed, {len(report.skipped)} skipped, "
          f"{len(report.problems)} with problems; {report.embedded} chunks embedded, "
          f"{report.chunks} chunks in {ctx.collection!r} ({name}, {report.retrieval} retrieval) "
          f"in {report.seconds:.1f}s")
    if report.fetched or report.unchanged_lastmod or report.unchanged_304:  # a site's pages, not a folder's
        print(pages_line(report))
    return 0


def pages_line(report: Any) -> str:
    """Say how many of a site's pages were downloaded, changed, and skipped as unchanged (and how)."""
    skipped = report.unchanged_lastmod + report.unchanged_304
    return (f"pages: {report.fetched} fetched, {report.changed} changed, {skipped} not downloaded as unchanged "
            f"({report.unchanged_lastmod} by sitemap lastmod, {report.unchanged_304} by HTTP 304)")

