"""The conversation-memory subcommands of `rag-agent`: sessions list, sessions prune, resume."""

from __future__ import annotations

import argparse
from typing import Any

from graph.context import Context
from rag_agent.cli.output import dump_json, exit_code, print_answer


def add_commands(sub: Any) -> None:
    """Add `sessions list`, `sessions prune` and `resume` to the command line."""
    sessions = sub.add_parser("sessions", help="list conversations, or delete idle ones")
    actions = sessions.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="thread id, created, turns, retrievals, tokens and last activity of "
                                              "every conversation")
    listing.add_argument("--json", action="store_true", help="print one JSON object per line")
    prune = actions.add_parser("prune", help="delete conversations idle longer than --idle")
    prune.add_argument("--idle", help="e.g. 30m, 24h, 7d (default $RAG_AGENT_SESSION_TTL or 24h)")
    resume = sub.add_parser("resume", help="finish a turn that was interrupted midway")
    resume.add_argument("--thread", required=True, help="conversation id whose last turn was interrupted")
    resume.add_argument("--json", action="store_true", help="print the full response as JSON")


def resume(args: argparse.Namespace, ctx: Context) -> int:
    """Finish the thread's interrupted turn and print its answer."""
    from rag_agent.service import Agent

    with Agent(ctx) as agent:
        result = agent.resume(args.thread)
    if args.json:
        print(dump_json(result, indent=2))
    else:
        print_answer(result)
    return exit_code(result)


def _list(agent: Any, rows: list[Any], as_json: bool, now: Any) -> None:
    """Print each session with its counts from the turn records (created-at, retrievals, tokens)."""
    from graph.recording import iso
    from rag_agent.sessions import format_idle

    counted = agent.records.sessions()
    for s in rows:
        stats = counted.get(s.thread_id) or {}
        created = iso(stats["created_at"]) if stats else None
        retrievals, tokens = int(stats.get("retrievals") or 0), int(stats.get("tokens") or 0)
        if as_json:
            print(dump_json({"thread_id": s.thread_id, "created_at": created, "turns": s.turns,
                              "recorded_turns": int(stats.get("turns") or 0), "retrieval_count": retrievals,
                              "total_tokens_used": tokens, "last_activity": s.last_activity.isoformat(),
                              "idle_seconds": round(s.idle(now).total_seconds())}))
        else:
            print(f"{s.thread_id:34} created {(created or '-')[:19]:19}  {s.turns:4} turns {retrievals:4} retrievals "
                  f"{tokens:7} tokens  last {s.last_activity:%Y-%m-%d %H:%M:%S} UTC  idle {format_idle(s.idle(now))}")
    if not rows and not as_json:
        print("no conversations")


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Run a `sessions` subcommand against the configured conversation store."""
    from logic.durations import format_idle, parse_duration, utcnow
    from rag_agent.service import Agent
    from rag_agent.sessions import list_sessions
    from tools.settings import get_settings

    # Parse first: a bad duration should fail before any store is opened.
    # `--idle 0s` prunes every thread not in use right now.
    idle = parse_duration(args.idle, "--idle", allow_zero=True) if getattr(args, "idle", None) else None
    with Agent(ctx) as agent:
        if args.action == "list":
            _list(agent, list_sessions(agent.checkpointer), args.json, utcnow())
            return 0
        idle = get_settings().ttl if idle is None else idle  # timedelta(0) is falsy but a real choice
        if idle is None:
            print("RAG_AGENT_SESSION_TTL is off; pass --idle to choose what counts as idle")
            return 2
        deleted = agent.prune(idle)
        print(f"deleted {len(deleted)} conversation(s) idle longer than {format_idle(idle)}"
              + (": " + ", ".join(deleted) if deleted else ""))
        return 0
