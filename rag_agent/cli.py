"""The `rag-agent` command: ingest, ask, chat, eval, calibrate, sessions, resume, feedback, report."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from graph.context import Context, SettingsError
from rag_agent import cli_ingest, cli_memory, cli_records
from rag_agent.cli_output import (
    EXIT_INVALID,
    EXIT_OK,
    dump_json,
    exit_code,
    exit_code_for,
    print_answer,
    print_event,
)
from rag_agent.logs import install_redaction, mask_url
from tools.settings import get_settings, overridden

EXIT_CANCELLED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


def _parser() -> argparse.ArgumentParser:
    """Describe the command line."""
    parser = argparse.ArgumentParser(
        prog="rag-agent", description="Answer questions from your docs, with citations."
    )
    parser.add_argument(
        "--data-dir", help="index, manifest and checkpoints (default $RAG_AGENT_DATA_DIR or ./.rag-agent)"
    )
    parser.add_argument("--collection", help="collection name (default 'docs')")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_ingest.add_command(sub)
    ask = sub.add_parser("ask", help="ask one question")
    ask.add_argument("question")
    ask.add_argument("--thread", help="conversation id to continue")
    ask.add_argument("--json", action="store_true", help="print the full response as JSON")
    ask.add_argument("--top-k", type=int, metavar="N",
                     help="how many passages to retrieve and cite (1-20, default 5)")
    ask.add_argument("--threshold", type=float, help="override the index's calibrated score threshold")
    chat = sub.add_parser("chat", help="interactive conversation (/reset, /exit)")
    chat.add_argument("--thread", help="conversation id to continue")
    for command in (ask, chat):
        command.add_argument("--context", metavar="FILE|-",
                             help="answer only from this text selection (a file, or - for stdin)")
        command.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", dest="filters",
                             help="restrict retrieval: module=, chapter=, section= (a heading) or source= (a path "
                                  "prefix); repeatable")
    config = sub.add_parser("config", help="show the settings in use and why")
    config.add_argument("--json", action="store_true", help="print the settings as one JSON object")
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
    cli_memory.add_commands(sub)
    cli_records.add_commands(sub)
    _accept_global_flags(parser)
    return parser


def _accept_global_flags(parser: argparse.ArgumentParser) -> None:
    """Let --data-dir and --collection also follow the subcommand (`rag-agent ask --data-dir d "…"`)."""
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for command in getattr(action, "choices", {}).values():
            # SUPPRESS: a flag not given after the subcommand leaves the one given before it in place.
            command.add_argument("--data-dir", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            command.add_argument("--collection", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            _accept_global_flags(command)


def _context(args: argparse.Namespace) -> Context:
    """Build the run's Context from flags and environment."""
    # --data-dir and --collection are the operator's: they set the deployment settings in main().
    values: dict[str, Any] = {"top_k": getattr(args, "top_k", None),
                              "score_threshold": getattr(args, "threshold", None)}
    return Context.from_mapping({k: v for k, v in values.items() if v is not None})




def _scope(args: argparse.Namespace) -> tuple[str | None, dict[str, str]]:
    """Read --context and parse the --filter flags; the graph validates their content."""
    from logic.errors import InvalidInputError

    filters: dict[str, str] = {}
    for item in args.filters:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or key.strip() in filters:
            raise InvalidInputError(f"--filter {item!r} must be KEY=VALUE, each key once (e.g. module=module-3)")
        filters[key.strip()] = value.strip()
    if args.context is None:
        return None, filters
    return _read_context(args.context), filters


def _read_context(name: str) -> str:
    """Read a --context file (or stdin) up to the selection limit; a longer input is refused, not read whole."""
    from logic.errors import InvalidInputError
    from logic.validation import MAX_SELECTION_CHARS

    try:
        if name == "-":
            text = sys.stdin.read(MAX_SELECTION_CHARS + 1)
        else:
            with open(name, encoding="utf-8") as handle:  # a device such as /dev/zero never ends
                text = handle.read(MAX_SELECTION_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read the --context file {name}: {exc}") from exc
    if len(text) > MAX_SELECTION_CHARS:
        raise InvalidInputError(f"the --context input {name} is longer than {MAX_SELECTION_CHARS} characters "
                                "(the selection limit); select a shorter passage")
    # An empty file is a mistake, not "no selection" (which the graph reads "" as): say so here.
    if not text.strip():
        raise InvalidInputError("the selection (context) is empty; pass some text or leave --context out")
    return text


def _ask(args: argparse.Namespace, ctx: Context) -> int:
    """Answer one question."""
    from rag_agent.service import Agent

    selection, filters = _scope(args)
    if args.json:
        result = Agent(ctx).ask(args.question, args.thread, context=selection, filters=filters)
        print(dump_json(result, indent=2))
    else:
        result = Agent(ctx).ask(args.question, args.thread, context=selection, filters=filters,
                                on_answer=print_event)
        print_answer(result, streamed=True)
    return exit_code(result)


def _chat(args: argparse.Namespace, ctx: Context) -> int:
    """Hold a conversation on one thread (rag_agent/cli_chat.py)."""
    from logic.errors import InvalidInputError
    from rag_agent import cli_chat

    if args.context == "-":
        raise InvalidInputError("chat reads your questions from stdin; pass the selection as a --context FILE")
    selection, filters = _scope(args)  # kept for the whole session
    return cli_chat.run(args, ctx, selection, filters)


def describe(ctx: Context) -> dict[str, str]:
    """Say which provider, store and threshold this configuration uses, and why."""
    from tools import manifest
    from tools.chat import chat_available
    from tools.embeddings import resolve_name

    embedder = resolve_name(ctx.embedding_model)
    if ctx.embedding_model:
        why_embedder = "set by RAG_AGENT_EMBEDDING_MODEL"
    elif embedder.startswith("cohere/"):
        why_embedder = "COHERE_API_KEY is set"
    else:
        why_embedder = "no COHERE_API_KEY: the bundled local model"
    settings = get_settings()
    info = manifest.load(settings.data_dir)["collections"].get(ctx.collection)
    value, how = manifest.resolve_threshold(ctx.score_threshold, info, embedder)
    threshold = f"{value} ({how})"
    qdrant = mask_url(settings.qdrant_url)
    base_url = mask_url(settings.openai_base_url)
    return {
        "chat": (f"{ctx.chat_model} (OPENAI_API_KEY is set"
                 + (f", OPENAI_BASE_URL={base_url})" if base_url else ")")
                 if chat_available() else "extractive answers (no OPENAI_API_KEY)"),
        "embeddings": f"{embedder} ({why_embedder})",
        "vector_store": f"Qdrant server {qdrant} (QDRANT_URL)" if qdrant
        else f"Qdrant local mode in {Path(settings.data_dir, 'qdrant').resolve()} (no QDRANT_URL)",
        "collection": ctx.collection + (f" ({info['chunks']} chunks)" if info else " (not ingested yet)"),
        "data_dir": str(Path(settings.data_dir).resolve()),
        "score_threshold": threshold,
        "top_k": str(ctx.top_k),
        "retrieval": manifest.retrieval_mode(info) + " (stored with the index)" if info
        else f"{manifest.DEFAULT_RETRIEVAL} (default for a new index)",
    }


def _config(args: argparse.Namespace, ctx: Context) -> int:
    """Print the configuration in use: what it means, then the deployment settings object itself (secrets masked)."""
    summary, deployment = describe(ctx), get_settings().shown()
    if args.json:
        print(json.dumps({**summary, "settings": deployment}))
    else:
        for key, value in summary.items():
            print(f"{key:16} {value}")
        print("\ndeployment settings (environment; never set per run):")
        for key, value in deployment.items():
            print(f"  {key:16} {value}")
    return EXIT_OK


def _records(args: argparse.Namespace, ctx: Context) -> tuple[Context, list[dict[str, Any]]]:
    """Ingest the corpus if asked, then run every labelled question and conversation through the graph."""
    from langgraph.checkpoint.memory import InMemorySaver

    from rag_agent import evaluate
    from rag_agent.service import Agent

    questions = evaluate.load_questions(args.questions, args.near_miss)
    conversations = evaluate.load_jsonl(args.conversations) if args.conversations else []
    root = args.selection_root or args.corpus
    if not args.corpus:
        return ctx, evaluate.run(Agent(ctx, InMemorySaver()), questions, conversations, root)
    # A fresh collection of the operator's own making: served for this command only.
    with overridden(collection=f"eval-{ctx.collection}") as settings:
        ctx = Context.from_mapping({**vars(ctx), "collection": settings.collection})
        args.path, args.base_url, args.recreate = args.corpus, "", True
        cli_ingest.run(argparse.Namespace(**{**vars(args), "json": False}), ctx)  # eval prints its own JSON
        return ctx, evaluate.run(Agent(ctx, InMemorySaver()), questions, conversations, root)


def _print_figures(figures: dict[str, Any], as_json: bool) -> None:
    """Print figures as one JSON object or as an aligned table."""
    if as_json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:24} {value}")


def _eval(args: argparse.Namespace, ctx: Context) -> int:
    """Run labelled questions through the graph and print the figures (and the gate's best threshold)."""
    from rag_agent import evaluate

    ctx, records = _records(args, ctx)
    figures = evaluate.metrics(records)
    figures["best_threshold"] = evaluate.best_threshold(evaluate.sweep(records))
    if args.report:
        args.report.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    if args.json:
        _print_figures(figures, True)
        return EXIT_OK
    table = figures.pop("reliability")
    _print_figures(figures, False)
    print(evaluate.format_reliability(table))
    return EXIT_OK


def _calibrate(args: argparse.Namespace, ctx: Context) -> int:
    """Sweep the gate threshold, print the curve, and store the best one in the index manifest."""
    from logic import answerability
    from logic.errors import InvalidInputError
    from rag_agent import evaluate
    from tools import manifest

    if args.plot:
        evaluate.check_plotting()
    ctx, records = _records(args, ctx)
    curve = evaluate.sweep(records)
    best = evaluate.best_threshold(curve)
    counts = {"in_scope": sum(r["expected"] == "GROUNDED" for r in records),
              "out_of_scope": sum(r["expected"] == "NOT_FOUND" for r in records)}
    if not counts["in_scope"] or not counts["out_of_scope"]:
        raise InvalidInputError("calibration needs both in-scope and out-of-scope (expected NOT_FOUND) questions")
    if args.plot:
        evaluate.plot_curve(curve, best, args.plot)
    if not args.dry_run:
        manifest.store_threshold(get_settings().data_dir, ctx.collection, best["threshold"],
                                 {**best, **counts, "gate": answerability.GATE_VERSION})
    if args.json:
        _print_figures({"best": best, **counts, "stored": not args.dry_run, "curve": curve}, True)
        return EXIT_OK
    print(evaluate.format_curve(curve, best))
    stored = "not stored (--dry-run)" if args.dry_run else f"stored for collection {ctx.collection!r}"
    print(f"best threshold {best['threshold']} (balanced accuracy {best['balanced_accuracy']}, "
          f"{counts['in_scope']} in-scope / {counts['out_of_scope']} out-of-scope turns): {stored}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run the command line; errors print one clear line and set the exit code."""
    install_redaction()  # every command, not only those that build an Agent
    args = _parser().parse_args(argv)
    from logic.errors import AgentError
    from logic.validation import printable

    try:
        with overridden(data_dir=args.data_dir, collection=args.collection) as settings:
            logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
            ctx = _context(args)
            handler = {"ingest": cli_ingest.run, "ask": _ask, "chat": _chat, "eval": _eval, "calibrate": _calibrate,
                       "config": _config, "sessions": cli_memory.run, "resume": cli_memory.resume,
                       "feedback": cli_records.feedback, "report": cli_records.report}[args.command]
            return handler(args, ctx)
    except SettingsError as exc:
        print(printable(f"rag-agent: invalid setting: {exc}"), file=sys.stderr)
        return EXIT_INVALID
    except AgentError as exc:  # messages may quote a filter value or a path: printed without escapes
        print(printable(f"rag-agent: {exc.message} ({exc.code})"), file=sys.stderr)
        return exit_code_for(exc.code)
    except KeyboardInterrupt:
        # Ctrl-C: stop quietly, no traceback.
        print("\nrag-agent: cancelled", file=sys.stderr)
        return EXIT_CANCELLED


if __name__ == "__main__":
    sys.exit(main())
