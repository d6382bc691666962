"""`rag-agent ask` and `rag-agent chat`: the question commands, with their --context selection and --filter flags."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graph.context import Context
from rag_agent.cli.output import dump_json, exit_code, print_answer, print_event


def add_commands(sub: Any) -> None:
    """Add `ask` and `chat` to the command line."""
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


def scope(args: argparse.Namespace) -> tuple[str | None, dict[str, str]]:
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
    return read_context(args.context), filters


def read_context(name: str) -> str:
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


def ask(args: argparse.Namespace, ctx: Context) -> int:
    """Answer one question."""
    from rag_agent.service import Agent

    selection, filters = scope(args)
    with Agent(ctx) as agent:  # a warm agent (rag_agent/cli/warm.py) runs many of these in one process
        if args.json:
            result = agent.ask(args.question, args.thread, context=selection, filters=filters)
            print(dump_json(result, indent=2))
        else:
            result = agent.ask(args.question, args.thread, context=selection, filters=filters,
                               on_answer=print_event)
            print_answer(result, streamed=True)
    return exit_code(result)


def chat(args: argparse.Namespace, ctx: Context) -> int:
    """Hold a conversation on one thread (rag_agent/cli/chat.py)."""
    from logic.errors import InvalidInputError
    from rag_agent.cli import chat as terminal

    if args.context == "-":
        raise InvalidInputError("chat reads your questions from stdin; pass the selection as a --context FILE")
    selection, filters = scope(args)  # kept for the whole session
    return terminal.run(args, ctx, selection, filters)
