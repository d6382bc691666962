"""The turn-record subcommands of `rag-agent`: feedback and report."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from graph.context import Context
from logic.validation import printable
from rag_agent.cli.output import dump_json
from tools.settings import get_settings


def add_commands(sub: Any) -> None:
    """Add `feedback` and `report` to the command line."""
    feedback = sub.add_parser("feedback", help="rate an answer by its turn id (from ask --json)")
    feedback.add_argument("turn_id", help="the turn_id of the response")
    feedback.add_argument("rating", help="up or down (also +1 / -1)")
    feedback.add_argument("comment", nargs="?", help="what was wrong or right (optional)")
    report = sub.add_parser("report", help="what users asked: outcomes, latency, feedback and coverage gaps")
    report.add_argument("--since", default="7d", help="window to report, e.g. 24h, 7d, 4w (default 7d)")
    report.add_argument("--json", action="store_true", help="print the report as one JSON object")
    report.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML report here")
    report.add_argument("--site-url", default="", metavar="URL",
                        help="the docs site's address (https://docs.example.com): relative section links in the "
                             "HTML report resolve against it")


def feedback(args: argparse.Namespace, ctx: Context) -> int:
    """Store a rating of a recorded turn."""
    from rag_agent.records import open_store, record_feedback

    stored = record_feedback(args.turn_id, args.rating, args.comment, store=open_store(get_settings().data_dir))
    sent = " (also sent to LangSmith)" if stored["langsmith"] else ""
    print(printable(f"recorded {'up' if stored['rating'] > 0 else 'down'} for turn {args.turn_id}{sent}"))
    return 0


def _embedder(records: list[dict[str, Any]], ctx: Context) -> Any:
    """Return the embedder the turns were answered with (the configured one if none is recorded)."""
    from tools.embeddings import get_embeddings

    used = Counter(r["embedder"] for r in records if r["embedder"])
    return get_embeddings(used.most_common(1)[0][0] if used else ctx.embedding_model)


def report(args: argparse.Namespace, ctx: Context) -> int:
    """Print the report for the window; optionally write it as HTML."""
    if args.site_url and urlsplit(args.site_url).scheme not in {"http", "https"}:
        print(printable(f"rag-agent report: --site-url must be an http(s) address, got {args.site_url!r}"),
              file=sys.stderr)
        return 2
    from rag_agent.records import open_store
    from rag_agent.reporting import report as reporting
    from rag_agent.sessions import parse_duration

    window = parse_duration(args.since, "--since").total_seconds()
    store = open_store(get_settings().data_dir)

    def embed(texts: list[str]) -> list[list[float]]:
        # Loaded only when there are gaps to group; the embedder of the window's turns, as retrieval used it.
        return list(_embedder(store.turns(time.time() - window), ctx).embed_documents(texts))

    from tools import lexicon_store

    lexicon = lexicon_store.load(get_settings().data_dir, ctx.collection)
    # Words in two or more chunks: a word the docs use once (an example such as "weather") ties no question to them.
    vocabulary = {term for term, chunks in lexicon.df.items() if chunks >= 2} if lexicon else None
    built = reporting.build(store, window, embed, vocabulary=vocabulary)
    if args.html:
        from rag_agent.reporting.report_html import render

        args.html.write_text(render(built, args.site_url), encoding="utf-8")
    # Questions are the users' own text: printed without their control characters (no terminal escapes).
    if args.json:
        print(dump_json(built, indent=2))
    else:
        print(printable(reporting.format_text(built)))
        if args.html:
            print(f"\nHTML report written to {args.html}")
    return 0
