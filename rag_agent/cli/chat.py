"""`rag-agent chat`: a conversation at the terminal, with line editing and history, Ctrl-C and Ctrl-D."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graph.context import Context
from rag_agent.cli.output import EXIT_OK, print_answer, print_event
from tools.settings import get_settings

PROMPT = "you> "
CANCELLED = "(cancelled — ask again, or Ctrl-D to quit)"
HISTORY_FILE = "chat_history"
HISTORY_LINES = 1000


@contextmanager
def line_history(data_dir: str) -> Iterator[None]:
    """Give input() line editing and the questions of earlier sessions (up arrow), saved in the data dir."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input still works
        yield
        return
    path = Path(data_dir, HISTORY_FILE)
    try:
        readline.read_history_file(path)
    except OSError:
        pass  # first session, or an unreadable file: start with no history
    readline.set_history_length(HISTORY_LINES)
    try:
        yield
    finally:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError:
            pass  # history is a convenience; failing to save it must not fail the session


def run(args: argparse.Namespace, ctx: Context, selection: str | None, filters: dict[str, str]) -> int:
    """Hold a conversation on one thread until /exit or Ctrl-D; Ctrl-C cancels the answer being written."""
    from logic.validation import printable
    from rag_agent.service import Agent

    agent, thread = Agent(ctx), args.thread or uuid.uuid4().hex[:12]
    print(printable(f"thread {thread} — ask about the docs; /reset clears the conversation, /exit or Ctrl-D quits"))
    with line_history(get_settings().data_dir):
        while True:
            try:
                line = input(PROMPT)
            except EOFError:
                print()  # Ctrl-D: leave the shell's prompt on a line of its own
                return EXIT_OK
            except KeyboardInterrupt:
                print()  # Ctrl-C at the prompt drops the line, as a shell does
                continue
            if line.strip() in {"/exit", "/quit"}:
                return EXIT_OK
            try:
                result = agent.ask(line, thread, context=selection, filters=filters, on_answer=print_event)
            except KeyboardInterrupt:
                # The turn stops where it was; its checkpoints stay, and the next question starts a new turn.
                print(f"\n{CANCELLED}")
                continue
            print_answer(result, streamed=True)
