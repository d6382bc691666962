"""What recording a turn costs: turn time with records on vs off, interleaved in one run, plus the write alone.

Run from the project root:

    .venv/bin/python -m benchmarks.records_overhead              # 150 turns per side, SQLite
    .venv/bin/python -m benchmarks.records_overhead --turns 40 --checkpointer postgresql://postgres@127.0.0.1/x

Both sides are the product path, `Agent.ask` over a small hash-embedded corpus (so the turn itself is
fast and the recording's share is as visible as it can be) with the SQLite checkpointer in a temporary
folder, alternating on/off turn by turn with the order rotated, each turn on a new thread. Records go
to the same database the checkpoints use. The goal: recording adds at most 5 ms per turn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks._common import machine, median_ratio, ms, rotations
from graph.context import Context
from graph.record_stores import RECORDS_ENV
from rag_agent.service import Agent
from tests.tiny_corpus import CORPUS
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

QUESTIONS = ["What is Isaac Sim?", "How long should I knead bread dough?", "What does Replicator randomize?",
             "What is the capital of Australia?", "How hot should the oven be for bread?"]
GOAL_MS = 5.0


def _corpus(root: Path) -> Context:
    """Index the tiny corpus with the hash embedder and return a Context over it."""
    (root / "docs").mkdir()
    for name, text in CORPUS.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    ingest_folder(root / "docs", data_dir=root / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    return Context(data_dir=str(root / "data"), embedding_model="hash/256", score_threshold=0.2)


def main() -> None:
    """Time both sides and print the medians, the paired ratio and the write's own cost."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=150, help="turns per side")
    parser.add_argument("--checkpointer", help="a postgresql:// URL instead of a temporary SQLite file")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        ctx = _corpus(Path(tmp))
        with Agent(ctx, args.checkpointer or str(Path(tmp) / "conversations.sqlite")) as agent:
            before = len(agent.records.turns())  # a Postgres database may hold earlier runs' records
            for question in QUESTIONS:  # warm-up: imports, lexicon, first writes
                agent.ask(question)
            times: dict[str, list[float]] = {"on": [], "off": []}
            for i in range(args.turns):
                for side in rotations(["on", "off"], i):
                    os.environ[RECORDS_ENV] = side  # a benchmark process of its own: no test isolation needed
                    start = time.perf_counter()
                    agent.ask(QUESTIONS[i % len(QUESTIONS)])
                    times[side].append(time.perf_counter() - start)
            os.environ.pop(RECORDS_ENV, None)
            recorded = len(agent.records.turns()) - before
            writes = _write_cost(agent, 300)
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    print(f"turns per side: {args.turns}; records written: {recorded} (warm-up {len(QUESTIONS)} + {args.turns} on)")
    print(f"median turn: records on {ms(on)} ms, off {ms(off)} ms; difference {ms(on - off)} ms")
    print(f"median paired ratio on/off: {median_ratio(times['on'], times['off']):.3f}")
    print(f"record write alone (build + insert), median of 300: {ms(writes)} ms; goal <= {GOAL_MS} ms per turn")


def _write_cost(agent: Agent, count: int) -> float:
    """Return the median time to build and store one record, as the graph does at the end of a turn."""
    from graph.recording import build_record

    last = agent.records.turns()[-1]
    state = {"status": "grounded", "retrieval_query": last["question"], "confidence": 0.9, "tokens_used": 50,
             "started_at": time.time(), "messages": [], "intent": "question"}
    samples = []
    for i in range(count):
        start = time.perf_counter()
        agent.records.record_turn(build_record({**state, "turn_id": f"bench-{i}-{time.time()}"}, "bench", agent.context,
                                               time.time()))
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


if __name__ == "__main__":
    main()
