"""The `rag-agent` command: ingest, ask, chat, eval, calibrate, sessions, resume, feedback, report, warm."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from graph.context import Context, SettingsError
from rag_agent.cli import ask, config, evals, ingest, memory, records, warm
from rag_agent.cli.output import EXIT_INVALID, exit_code_for
from rag_agent.logs import install_redaction
from tools.settings import overridden

EXIT_CANCELLED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, what a shell reports when the reader (`| head`) went away


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
    ingest.add_command(sub)
    ask.add_commands(sub)
    config.add_command(sub)
    evals.add_commands(sub)
    memory.add_commands(sub)
    records.add_commands(sub)
    warm.add_command(sub)
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


def _warm(args: argparse.Namespace, ctx: Context) -> int:
    """Run `rag-agent warm`: it serves each forwarded `ask` through this command line."""
    return warm.run(args, ctx, main)


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
            handler = {"ingest": ingest.run, "ask": ask.ask, "chat": ask.chat, "eval": evals.run_eval,
                       "calibrate": evals.run_calibrate, "config": config.run,
                       "sessions": memory.run, "resume": memory.resume,
                       "feedback": records.feedback, "report": records.report,
                       "warm": _warm}[args.command]
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
    except BrokenPipeError:
        # `rag-agent ask … | head -1`: the reader has what it wanted. Point stdout at /dev/null so the
        # interpreter's final flush does not raise again, and stop as a piped Unix tool does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


if __name__ == "__main__":
    sys.exit(main())
