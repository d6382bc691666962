"""Turn latency through the compiled graph with its SQLite checkpointer vs the same nodes wired by hand.

Run from the project root (see docs/benchmarks-overhead.md for what the output means):

    .venv/bin/python -m benchmarks.graph_overhead                 # headline run
    .venv/bin/python -m benchmarks.graph_overhead --repeat 1      # quick look
    .venv/bin/python -m benchmarks.graph_overhead --variants      # + no checkpointer, other settings
    .venv/bin/python -m benchmarks.graph_overhead --variants --embedder hash/384  # overhead without the model
    .venv/bin/python -m benchmarks.graph_overhead --profile 25    # + cProfile of one pass of the graph

Sides, each answering the same textbook questions (30 in scope, 20 out of scope), interleaved
question by question with the order rotated every turn so no side is always first:

- ``hand``: a plain function that calls the same node functions in sequence (classify, retrieve =
  embed + search + rank, score_gate, extractive generate_grounded / generate_not_found), using the
  routing functions as if-conditions and a dict as state: no LangGraph engine, no checkpointer.
- ``graph``: ``Agent(ctx, open_checkpointer(tmp)).ask(question)``, the product path, on a new
  thread per question as ``rag-agent ask`` does.
- with ``--variants``: ``graph-nocp``, the same compiled graph without a checkpointer (the
  engine's own cost), and settings a fix could use: ``graph-sync-normal`` (the SQLite file with
  ``PRAGMA synchronous=NORMAL``), ``graph-exit`` (``durability="exit"``: one checkpoint per turn
  instead of one per step), ``graph-exit-normal`` (both), ``graph-sync`` (``durability="sync"``:
  checkpoints saved on the calling thread, not a background one) and ``graph-memory``
  (``InMemorySaver``: no SQLite at all).

Every side must return the same status and retrieved chunk ids as ``hand`` for every question
(asserted), so the sides provably did the same work.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Set before the embedder is imported: a benchmark must never reach a model hub or tracing service.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph.state import CompiledStateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from langgraph.types import Durability  # noqa: E402

import graph.builder  # noqa: E402
from benchmarks._common import machine, median_ratio, ms, ratio_of_medians, rotations, verdict  # noqa: E402
from graph.builder import compile_graph  # noqa: E402
from graph.context import Context  # noqa: E402
from graph.routing import (  # noqa: E402
    route_after_classify,
    route_after_generate_grounded,
    route_after_retrieve,
    route_after_score_gate,
)
from rag_agent.service import Agent, open_checkpointer, response  # noqa: E402
from tools import vectorstore  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "textbook"
GOAL = 1.10
NODE_NAMES = ("classify", "retrieve", "score_gate", "generate_grounded", "generate_not_found", "error_handler")

Node = Callable[..., dict[str, Any]]
Turn = Callable[[str], dict[str, Any]]
# One side's node timings for the turn in progress: (node name, seconds) per call.
Sink = list[tuple[str, float]]


def load_questions(path: Path) -> list[tuple[str, str, bool]]:
    """Return (id, question, in scope) for every line of a textbook question file, in file order."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(str(r["id"]), str(r["question"]), r.get("expected") != "NOT_FOUND") for r in rows]


def timed_node(name: str, node: Node, sink: Sink) -> Node:
    """Wrap a node so each call's wall time lands in `sink`; the same wrapper is used on every side."""

    # functools.wraps keeps the signature LangGraph inspects to decide whether to inject `runtime`.
    @functools.wraps(node)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            return node(*args, **kwargs)
        finally:
            sink.append((name, time.perf_counter() - start))

    return wrapper


@contextmanager
def instrumented_builder(sink: Sink) -> Iterator[None]:
    """Make compile_graph wire timed nodes in (build_graph reads the node names from its module)."""
    originals: dict[str, Node] = {name: getattr(graph.builder, name) for name in NODE_NAMES}
    for name, node in originals.items():
        setattr(graph.builder, name, timed_node(name, node, sink))
    try:
        yield
    finally:
        for name, node in originals.items():
            setattr(graph.builder, name, node)


def hand_wired(question: str, runtime: Runtime[Context], nodes: dict[str, Node]) -> dict[str, Any]:
    """Answer one question by calling the nodes in sequence, as a plain pipeline would."""
    state: dict[str, Any] = {"messages": [HumanMessage(content=question)]}

    def step(name: str, *args: Any) -> None:
        update = nodes[name](state, *args)
        # Messages append, as the graph's add_messages reducer does; other fields are overwritten.
        state.update(update, messages=[*state["messages"], *update.get("messages", [])])

    step("classify", runtime)
    after: str = route_after_classify(state)  # type: ignore[arg-type]
    if after == "retrieve":
        step("retrieve", runtime)
        after = route_after_retrieve(state)  # type: ignore[arg-type]
        if after == "score_gate":
            step("score_gate")
            after = route_after_score_gate(state)  # type: ignore[arg-type]
            if after == "generate_grounded":
                step("generate_grounded", runtime)
                after = route_after_generate_grounded(state)  # type: ignore[arg-type]
            if after == "generate_not_found":
                step("generate_not_found")
    if after == "error_handler":
        step("error_handler")
    return state


def prepare_index(data_dir: Path, corpus: Path, embedder: str) -> tuple[int, float]:
    """Ingest the corpus (incremental: unchanged pages are not re-embedded); return chunks and seconds."""
    start = time.perf_counter()
    report = ingest_folder(corpus, data_dir=data_dir, collection="docs", embeddings=get_embeddings(embedder),
                           embedding_model=embedder, progress=False)
    return report.chunks, time.perf_counter() - start


def fingerprint(result: dict[str, Any]) -> tuple[str, list[str]]:
    """Return what all sides must agree on: the status and the retrieved chunk ids, in order."""
    return result["status"], [c["chunk_id"] for c in result["retrieved"]]


def make_sides(ctx: Context, checkpoints: Path, variants: bool) -> tuple[dict[str, Turn], dict[str, Sink]]:
    """Build each side's turn function (all return the documented response) and its node-time sink."""
    sinks: dict[str, Sink] = {}

    def compiled(side: str, checkpointer: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
        sinks[side] = []
        with instrumented_builder(sinks[side]):
            return compile_graph(checkpointer)

    def invoker(app: CompiledStateGraph[Any, Any, Any, Any], durability: Durability | None = None) -> Turn:
        def turn(question: str) -> dict[str, Any]:
            # Agent.ask without the thread check and lock (microseconds), so durability can be passed.
            thread = uuid.uuid4().hex
            state = app.invoke({"messages": [HumanMessage(content=question)]},
                               {"configurable": {"thread_id": thread}}, context=ctx, durability=durability)
            return response(state, thread, 0.0)

        return turn

    sinks["hand"] = []
    hand_nodes = {name: timed_node(name, getattr(graph.builder, name), sinks["hand"]) for name in NODE_NAMES}
    runtime: Runtime[Context] = Runtime(context=ctx)
    sides: dict[str, Turn] = {
        # Shaped like Agent.ask's result so every side does the same (tiny) post-processing.
        "hand": lambda q: response(hand_wired(q, runtime, hand_nodes), uuid.uuid4().hex, 0.0),
    }
    sinks["graph"] = []
    with instrumented_builder(sinks["graph"]):
        sides["graph"] = Agent(ctx, open_checkpointer(checkpoints / "graph")).ask
    if variants:
        sides["graph-nocp"] = invoker(compiled("graph-nocp", None))
        sides["graph-sync-normal"] = invoker(compiled("graph-sync-normal", normal_sync(checkpoints / "normal")))
        sides["graph-exit"] = invoker(compiled("graph-exit", open_checkpointer(checkpoints / "exit")), "exit")
        # Both together: the cheapest configuration that still keeps every finished turn on disk.
        sides["graph-exit-normal"] = invoker(
            compiled("graph-exit-normal", normal_sync(checkpoints / "exit-normal")), "exit")
        # "sync" saves each step's checkpoint on the calling thread instead of a background thread.
        sides["graph-sync"] = invoker(compiled("graph-sync", open_checkpointer(checkpoints / "sync")), "sync")
        # In memory: the engine's checkpoint bookkeeping without SQLite serialisation and I/O.
        sides["graph-memory"] = invoker(compiled("graph-memory", InMemorySaver()))
    return sides, sinks


def normal_sync(folder: Path) -> SqliteSaver:
    """Open the product's checkpointer with PRAGMA synchronous=NORMAL, as a proposed fix would."""
    saver = open_checkpointer(folder)
    # In WAL mode NORMAL skips the fsync on each commit (the WAL is synced at checkpoints): a crash of
    # the process loses nothing, a power cut may lose the last turns. FULL (the default) syncs each commit.
    saver.conn.execute("PRAGMA synchronous = NORMAL")
    return saver


class Samples:
    """Per side and question: turn seconds, and seconds spent outside the node functions."""

    def __init__(self, sides: list[str]) -> None:
        self.turn: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
        self.outside: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
        self.nodes: dict[str, dict[str, list[float]]] = {s: {} for s in sides}

    def add(self, side: str, qid: str, seconds: float, calls: Sink) -> None:
        """Record one timed turn and the node calls it made."""
        self.turn[side].setdefault(qid, []).append(seconds)
        self.outside[side].setdefault(qid, []).append(seconds - sum(t for _, t in calls))
        for name, t in calls:
            self.nodes[side].setdefault(name, []).append(t)

    def flat(self, table: dict[str, dict[str, list[float]]], side: str, ids: list[str]) -> list[float]:
        """Return one side's samples for the given questions, in a fixed (question, repetition) order."""
        return [t for qid in ids for t in table[side].get(qid, [])]


def measure(sides: dict[str, Turn], sinks: dict[str, Sink], questions: list[tuple[str, str, bool]],
            repeat: int, warmup: int) -> Samples:
    """Time every side on every question, interleaved, and check the sides agree."""
    names = list(sides)
    samples = Samples(names)
    # Warm-up turns (model, Qdrant and SQLite first use) on the first questions, untimed.
    schedule = [(-1, q) for q in questions[:warmup]] + [(rep, q) for rep in range(repeat) for q in questions]
    for turn_no, (rep, (qid, question, _)) in enumerate(schedule):
        results = {}
        for name in rotations(names, turn_no):
            sinks[name].clear()
            start = time.perf_counter()
            results[name] = sides[name](question)
            seconds = time.perf_counter() - start
            if rep >= 0:
                samples.add(name, qid, seconds, sinks[name])
        expected = fingerprint(results["hand"])
        for name in names:
            assert fingerprint(results[name]) == expected, (qid, name, fingerprint(results[name]), expected)
    return samples


def report(samples: Samples, questions: list[tuple[str, str, bool]]) -> float:
    """Print medians and ratios against `hand`, overall and per scope; return the headline ratio."""
    groups = {
        "all": [q for q, _, _ in questions],
        "in-scope": [q for q, _, scope in questions if scope],
        "out-of-scope": [q for q, _, scope in questions if not scope],
    }
    others = [s for s in samples.turn if s != "hand"]
    headline = 0.0
    print(f"\n{'side':<18} {'questions':<13} {'turns':>5} {'median ms':>10} {'x hand':>8} {'(ratio of medians)':>19} "
          f"{'+ms vs hand':>12} {'outside nodes ms':>17}")
    for label, ids in groups.items():
        hand = samples.flat(samples.turn, "hand", ids)
        for side in ["hand", *others]:
            turn = samples.flat(samples.turn, side, ids)
            outside = statistics.median(samples.flat(samples.outside, side, ids))
            ratio = median_ratio(turn, hand)
            if side == "graph" and label == "all":
                headline = ratio
            extra = statistics.median([t - h for t, h in zip(turn, hand, strict=True)])
            print(f"{side:<18} {label:<13} {len(turn):>5} {ms(statistics.median(turn)):>10} {ratio:>7.3f}x "
                  f"{ratio_of_medians(turn, hand):>18.3f}x {ms(extra):>12} {ms(outside):>17}")
        print()
    print("x hand = median of paired per-turn ratios (same question, back to back); +ms = median paired\n"
          "difference; outside nodes = turn time minus the node functions' own time (engine, checkpointer,\n"
          "state merging) -- for `hand` that is the plain function's dict updates and routing calls.")
    fixed_cost(samples, groups["all"])
    return headline


def fixed_cost(samples: Samples, ids: list[str]) -> None:
    """Print the graph's per-turn cost outside the nodes and the turn length at which it is 10%.

    Turn times swing with the embedder on a shared machine, but the time outside the nodes does
    not involve the model, so it is the steadier measure of what the graph adds to every turn. It
    is a lower bound: background checkpoint threads can also slow the nodes down (the paired
    difference, printed alongside, includes that).
    """
    hand = samples.flat(samples.turn, "hand", ids)
    hand_turn = statistics.median(hand)
    hand_out = statistics.median(samples.flat(samples.outside, "hand", ids))
    print()
    for side in [s for s in samples.turn if s != "hand"]:
        added = statistics.median(samples.flat(samples.outside, side, ids)) - hand_out
        paired = statistics.median([t - h for t, h in zip(samples.flat(samples.turn, side, ids), hand, strict=True)])
        print(f"{side}: adds {ms(added)} ms per turn outside the nodes ({ms(paired)} ms paired turn difference) "
              f"-> {1 + added / hand_turn:.3f}x at this run's median hand turn of {ms(hand_turn)} ms; "
              f"within {GOAL:.2f}x only for hand turns >= {ms(added / (GOAL - 1))} ms")


def node_table(samples: Samples) -> None:
    """Print median node times per side: the nodes are the same code, so they should match."""
    sides = list(samples.nodes)
    print("\nPer-node median wall time, ms (node functions timed by a wrapper; count = calls):")
    print(f"  {'node':<20}" + "".join(f"{s:>19}" for s in sides))
    for name in NODE_NAMES:
        if any(name in samples.nodes[s] for s in sides):
            cells = []
            for s in sides:
                values = samples.nodes[s].get(name, [])
                cells.append(f"{ms(statistics.median(values))} ({len(values)})" if values else "-")
            print(f"  {name:<20}" + "".join(f"{c:>19}" for c in cells))
    # Why a wrapper and not stream_mode="debug": debug events are stamped with datetime.now() when the
    # step's tasks are prepared and when their writes come back, so scheduling and streaming work is
    # billed to the node, and streaming itself would change what is measured. A perf_counter wrapper
    # around the node function times exactly the node's code, and the same wrapper runs on every side.


def profile_graph(side: Turn, questions: list[tuple[str, str, bool]], top: int) -> None:
    """Print the cProfile functions with the most cumulative time over one pass of a side."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _qid, question, _ in questions:
        side(question)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    print(f"\ncProfile of one pass of `graph` ({len(questions)} turns), top {top} by own time:")
    stats.sort_stats("tottime").print_stats(top)
    # Own time shows *what* burns the clock (often thread hand-offs); cumulative time inside the
    # engine and the checkpointer shows *which step* of the graph incurs it.
    print(f"top {top} by cumulative time among LangGraph, checkpointer, SQLite and thread-pool functions:")
    stats.sort_stats("cumulative").print_stats("langgraph|sqlite|thread", top)


def main(argv: list[str] | None = None) -> int:
    """Prepare the index, time the sides, print the tables and the verdict; exit 1 if the goal is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="timed passes over the questions (default 2)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed warm-up turns per side (default 5)")
    parser.add_argument("--variants", action="store_true",
                        help="also time the graph without a checkpointer and with settings a fix could use")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile one pass of `graph` and print the top N functions")
    parser.add_argument("--embedder", default=LOCAL_MODEL,
                        help=f"embedder to index and query with (default {LOCAL_MODEL}; hash/384 removes the model)")
    parser.add_argument("--index", type=Path, default=None,
                        help="index folder to reuse between runs (default: a cache folder under the system temp "
                             "dir, updated incrementally; --fresh ingests into a throwaway one)")
    parser.add_argument("--fresh", action="store_true", help="ingest into a new temporary folder")
    parser.add_argument("--shared", type=Path, default=SHARED, help="textbook eval folder, read in place")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    print(machine())
    questions = load_questions(args.shared / "textbook-questions.jsonl")
    slug = args.embedder.replace("/", "-")
    with tempfile.TemporaryDirectory(prefix="bench-graph-") as tmp:
        index = Path(tmp, "index") if args.fresh else args.index or Path(tempfile.gettempdir(), f"rag-bench-{slug}")
        chunks, seconds = prepare_index(index, args.shared / "corpus", args.embedder)
        print(f"index: {args.shared / 'corpus'} -> {chunks} chunks, {args.embedder}, in {index} "
              f"(ingest/update {seconds:.1f} s); checkpoints in {tmp}")
        ctx = Context(data_dir=str(index), embedding_model=args.embedder, top_k=5)
        sides, sinks = make_sides(ctx, Path(tmp), args.variants)
        in_scope = sum(scope for _, _, scope in questions)
        print(f"questions: {len(questions)} ({in_scope} in scope), top_k={ctx.top_k}, extractive answers; "
              f"{args.warmup} warm-up + {args.repeat} x {len(questions)} timed turns per side, "
              f"sides {', '.join(sides)} interleaved per question")
        samples = measure(sides, sinks, questions, args.repeat, args.warmup)
        print("all sides agreed on status and retrieved chunk ids for every turn")
        ratio = report(samples, questions)
        node_table(samples)
        if args.profile:
            profile_graph(sides["graph"], questions, args.profile)
        vectorstore.close_clients()
    print(f"\ngraph (SQLite checkpointer) vs hand-wired: {verdict(ratio, GOAL)}")
    print(f"runtime: {time.perf_counter() - start:.0f} s")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
