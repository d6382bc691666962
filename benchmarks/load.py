"""Load test: concurrent conversations through `langgraph dev`; no failed runs, no lost turns, p50/p99.

Starts its own dev server over a tiny hash-embedded corpus (tests/e2e/devserver.py), or uses a
running one with --url. Each conversation is one thread that asks, waits for the answer, and asks
again until the time is up; afterwards every thread's state must hold exactly the turns its client
counted. Every other cycle of questions is made distinct, so latencies are reported for turns whose
retrieval ran (uncached) and for turns the per-thread retrieval cache answered (cached), apart.

    .venv/bin/python benchmarks/load.py --conversations 10 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, sys.path[0] is benchmarks/; the repo root makes `tests.e2e` importable.
sys.path.insert(0, str(ROOT))

from langgraph_sdk import get_client  # noqa: E402

from tests.e2e import devserver  # noqa: E402

# A conversation cycles through these: a question, a follow-up that needs memory, an off-topic one.
QUESTIONS = ("What is Isaac Sim?", "How do I use it for synthetic data?", "How long do I knead bread dough?")
# Hash-embedder scores are lower than the real model's (see tests/e2e).
CONTEXT = {"score_threshold": 0.2}


@dataclass
class Conversation:
    """One client's thread and what it saw."""

    thread_id: str
    turns: int = 0
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    cached: list[float] = field(default_factory=list)
    uncached: list[float] = field(default_factory=list)


def question_for(turn: int) -> str:
    """Cycle through QUESTIONS; every other cycle the questions are made distinct, so retrieval runs uncached."""
    question = QUESTIONS[turn % len(QUESTIONS)]
    # The retrieval cache is keyed by thread and query: a repeated question is a cache hit, a new one is not.
    return question if (turn // len(QUESTIONS)) % 2 == 0 else f"{question} (asked at turn {turn})"


async def converse(client: Any, deadline: float, timeout: float) -> Conversation:
    """Ask on one thread until the deadline; a turn counts only when its run returned an answer."""
    thread = await client.threads.create()
    conv = Conversation(thread["thread_id"])
    while time.monotonic() < deadline:
        question = question_for(conv.turns)
        started = time.perf_counter()
        try:
            out = await asyncio.wait_for(client.runs.wait(
                conv.thread_id, "agent", input={"messages": [{"role": "user", "content": question}]},
                context=CONTEXT), timeout)
        except Exception as exc:  # any client, HTTP or timeout error is a failed run
            conv.failures.append(f"{type(exc).__name__}: {exc}"[:200])
            continue
        elapsed = time.perf_counter() - started
        conv.latencies.append(elapsed)
        if not isinstance(out, dict) or out.get("status") in {None, "error"} or not out.get("answer"):
            conv.failures.append(f"bad output: {str(out)[:200]}")
            continue
        (conv.cached if out.get("retrieval_cached") else conv.uncached).append(elapsed)
        conv.turns += 1
    return conv


def percentile(values: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) by linear interpolation."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def machine_line() -> str:
    """Describe the machine the figures were measured on."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    return (f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} CPUs ({usable} usable){load}, Python {platform.python_version()}")


async def run(url: str, conversations: int, seconds: float, timeout: float, token: str | None) -> int:
    """Drive the conversations, check every thread's state, print the figures; return the exit code."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = get_client(url=url, api_key=None, headers=headers, timeout=timeout)
    deadline = time.monotonic() + seconds
    started = time.perf_counter()
    convs = await asyncio.gather(*(converse(client, deadline, timeout) for _ in range(conversations)))
    elapsed = time.perf_counter() - started

    lost = []
    for conv in convs:
        state = await client.threads.get_state(conv.thread_id)
        stored = (state.get("values") or {}).get("turns", 0)
        if stored != conv.turns:
            lost.append(f"{conv.thread_id}: client counted {conv.turns}, thread holds {stored}")

    latencies = sorted(x for conv in convs for x in conv.latencies)
    failures = [f for conv in convs for f in conv.failures]
    turns = sum(conv.turns for conv in convs)
    print(machine_line())
    print(f"{conversations} conversations for {seconds:g} s against {url}: {turns} turns in {elapsed:.1f} s "
          f"({turns / elapsed:.1f} turns/s); failed runs {len(failures)}; lost turns {len(lost)}")
    if latencies:
        print(f"latency per turn: p50 {percentile(latencies, 50) * 1000:.0f} ms, "
              f"p99 {percentile(latencies, 99) * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    for kind in ("uncached", "cached"):
        values = sorted(x for conv in convs for x in getattr(conv, kind))
        if values:
            print(f"  retrieval {kind}: {len(values)} turns, p50 {percentile(values, 50) * 1000:.0f} ms, "
                  f"p99 {percentile(values, 99) * 1000:.0f} ms")
    print(f"turns per conversation: min {min(c.turns for c in convs)}, max {max(c.turns for c in convs)}")
    for line in (failures[:5] + lost[:5]):
        print("  ", line)
    return 0 if turns and not failures and not lost else 1


def main() -> int:
    """Parse the options, start a dev server unless --url is given, and run the load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one run may take")
    parser.add_argument("--url", help="a running server (else one is started over a tiny corpus)")
    parser.add_argument("--token", help="bearer token, when the server has RAG_AGENT_API_KEYS")
    parser.add_argument("--jobs", type=int, help="--n-jobs-per-worker for the started server "
                        "(langgraph dev runs one job at a time unless told otherwise)")
    args = parser.parse_args()
    if args.url:
        return asyncio.run(run(args.url, args.conversations, args.seconds, args.timeout, args.token))
    with tempfile.TemporaryDirectory(prefix="rag-agent-load-") as tmp:
        env = devserver.prepare(Path(tmp))
        extra = ["--n-jobs-per-worker", str(args.jobs)] if args.jobs else []
        server = devserver.start(Path(tmp), env, args=extra)
        try:
            return asyncio.run(run(server.url, args.conversations, args.seconds, args.timeout, None))
        finally:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
