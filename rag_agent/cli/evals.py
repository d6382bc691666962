"""`rag-agent eval` and `rag-agent calibrate`: labelled questions through the graph, figures, the threshold."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from graph.context import Context
from rag_agent.cli import ingest
from rag_agent.cli.output import EXIT_OK
from tools.settings import get_settings, overridden


def add_commands(sub: Any) -> None:
    """Add `eval` and `calibrate` to the command line."""
    evaluate = sub.add_parser("eval", help="measure retrieval and abstention on labelled questions")
    calibrate = sub.add_parser("calibrate", help="set the index's score threshold from labelled questions")
    for command in (evaluate, calibrate):
        command.add_argument("questions", type=Path, nargs="*", help="JSON Lines: question, gold, expected")
        command.add_argument("--conversations", type=Path, help="JSON Lines of multi-turn conversations")
        command.add_argument("--corpus", type=Path, help="ingest this folder into a fresh collection first")
        command.add_argument("--retrieval", choices=["hybrid", "dense"], help="retrieval mode for --corpus")
        command.add_argument("--json", action="store_true", help="print the figures as one JSON object")
        command.add_argument("--near-miss", type=Path, action="append", default=[], metavar="FILE",
                             help="JSON Lines whose out-of-scope questions are near misses (reported apart); "
                                  "repeatable")
        command.add_argument("--selection-root", type=Path,
                             help="folder that `selection_file` paths are relative to (default: --corpus)")
    evaluate.add_argument("--report", type=Path, help="write one JSON line per question/turn here")
    calibrate.add_argument("--plot", type=Path, help="save the balanced-accuracy curve as a PNG here")
    calibrate.add_argument("--dry-run", action="store_true", help="print the curve without storing the threshold")


def _records(args: argparse.Namespace, ctx: Context) -> tuple[Context, list[dict[str, Any]]]:
    """Ingest the corpus if asked, then run every labelled question and conversation through the graph."""
    from langgraph.checkpoint.memory import InMemorySaver

    from rag_agent.evaluation import evaluate
    from rag_agent.service import Agent

    questions = evaluate.load_questions(args.questions, args.near_miss)
    conversations = evaluate.load_conversations(args.conversations) if args.conversations else []
    root = args.selection_root or args.corpus
    evaluate.selection_texts(questions, root)  # a bad selection_file stops the run before the ingest
    # With --json, stdout holds the one JSON object: the ingest's report and any other note go to stderr.
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        if not args.corpus:
            return ctx, evaluate.run(Agent(ctx, InMemorySaver()), questions, conversations, root)
        # A fresh collection of the operator's own making: served for this command only.
        with overridden(collection=f"eval-{ctx.collection}") as settings:
            ctx = Context.from_mapping({**vars(ctx), "collection": settings.collection})
            args.path, args.base_url, args.recreate = args.corpus, "", True
            ingest.run(argparse.Namespace(**{**vars(args), "json": False}), ctx)  # eval prints its own JSON
            return ctx, evaluate.run(Agent(ctx, InMemorySaver()), questions, conversations, root)


def _print_figures(figures: dict[str, Any], as_json: bool) -> None:
    """Print figures as one JSON object or as an aligned table."""
    if as_json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:24} {value}")


def run_eval(args: argparse.Namespace, ctx: Context) -> int:
    """Run labelled questions through the graph and print the figures (and the gate's best threshold)."""
    from rag_agent.evaluation import evaluate, gate_curve

    ctx, records = _records(args, ctx)
    figures = evaluate.metrics(records)
    figures["best_threshold"] = gate_curve.best_threshold(gate_curve.sweep(records))
    if args.report:
        args.report.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    if args.json:
        _print_figures(figures, True)
        return EXIT_OK
    table = figures.pop("reliability")
    _print_figures(figures, False)
    print(evaluate.format_reliability(table))
    return EXIT_OK


def run_calibrate(args: argparse.Namespace, ctx: Context) -> int:
    """Sweep the gate threshold, print the curve, and store the best one in the index manifest."""
    from logic import answerability
    from logic.errors import InvalidInputError
    from rag_agent.evaluation import gate_curve
    from tools import manifest

    if args.plot:
        gate_curve.check_plotting()
    ctx, records = _records(args, ctx)
    curve = gate_curve.sweep(records)
    best = gate_curve.best_threshold(curve)
    counts = {"in_scope": sum(r["expected"] == "GROUNDED" for r in records),
              "out_of_scope": sum(r["expected"] == "NOT_FOUND" for r in records)}
    if not counts["in_scope"] or not counts["out_of_scope"]:
        raise InvalidInputError("calibration needs both in-scope and out-of-scope (expected NOT_FOUND) questions")
    if args.plot:
        gate_curve.plot_curve(curve, best, args.plot)
    if not args.dry_run:
        manifest.store_threshold(get_settings().data_dir, ctx.collection, best["threshold"],
                                 {**best, **counts, "gate": answerability.GATE_VERSION})
    if args.json:
        _print_figures({"best": best, **counts, "stored": not args.dry_run, "curve": curve}, True)
        return EXIT_OK
    print(gate_curve.format_curve(curve, best))
    stored = "not stored (--dry-run)" if args.dry_run else f"stored for collection {ctx.collection!r}"
    print(f"best threshold {best['threshold']} (balanced accuracy {best['balanced_accuracy']}, "
          f"{counts['in_scope']} in-scope / {counts['out_of_scope']} out-of-scope turns): {stored}")
    return EXIT_OK
