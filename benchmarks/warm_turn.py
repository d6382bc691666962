"""What durability costs a warm turn: the same agent, the same questions, LangGraph's three durability modes.

    .venv/bin/python benchmarks/warm_turn.py                  # textbook index, real embedder, 3 rounds
    .venv/bin/python benchmarks/warm_turn.py --smoke          # seconds: one module, hash embedder

Sides, run back to back per question in rotated order over the same distinct questions (no
retrieval-cache hits: the cache is per thread and question), each doing the same work but for its
checkpoint writes:

- ``agent sync``: ``Agent.ask`` as shipped (SQLite checkpoints, durability "sync": crash-resume at
  node granularity, superseded checkpoints pruned after the turn), one thread per round, so the
  message window is in play.
- ``agent async`` / ``agent exit``: the same with LangGraph's other durability modes.
- ``agent sync, no reader``: ``agent sync`` without the reading model (``RAG_AGENT_READER=false``): what
  reading the best passages costs a turn.

The turn against another framework's on the same index is benchmarks/llamaindex_side.py. (This script
once compared the agent with a hand-wired embed + search + answer "pipeline"; once the agent's answerer
scored passages by meaning and the pipeline's did not, the two no longer did the same work.)
The embedder remembers recent queries, so a question's later sides reuse its vector; rotation spreads
that over the sides.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rag_agent.service  # noqa: E402
from benchmarks._common import machine, median_ratio, ms, rotations  # noqa: E402
from graph.context import Context  # noqa: E402
from rag_agent.evaluation.evaluate import load_jsonl  # noqa: E402
from rag_agent.service import Agent  # noqa: E402
from tools import manifest  # noqa: E402
from tools.embeddings import get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402
from tools.settings import overridden  # noqa: E402

SHARED = Path(os.environ.get("RAG_AGENT_SHARED", ROOT.parent / "shared")) / "eval" / "textbook"
SIDES = ("agent sync", "agent async", "agent exit", "agent sync, no reader")


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Build (or reuse) the index, time every side per question, and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None, help="reused when it already holds the corpus")
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus")
    parser.add_argument("--embedder", default="local/all-MiniLM-L6-v2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="one module, hash embedder, 1 round of 3 questions")
    args = parser.parse_args(argv)
    if args.smoke:
        args.corpus, args.embedder, args.rounds, args.questions = args.corpus / "module-1", "hash/384", 1, 3
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="rag-warm-"))
    if not (manifest.load(data_dir)["collections"].get("docs") or {}).get("chunks"):
        ingest_folder(args.corpus, data_dir=data_dir, collection="docs", embeddings=get_embeddings(args.embedder),
                      embedding_model=args.embedder, progress=False)
    questions = [q["question"] for q in load_jsonl(SHARED / "textbook-questions.jsonl")][:args.questions]
    os.environ["RAG_AGENT_DATA_DIR"] = str(data_dir)  # this script is the deployment it measures
    ctx = Context(embedding_model=args.embedder)
    agent = Agent(ctx, checkpointer=str(Path(data_dir) / "bench-checkpoints.sqlite"))
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    for name in SIDES:  # warm every side: models, snapshot, encoder, checkpoint file
        run(name, agent, "What is a ROS 2 node?", uuid.uuid4().hex)
    print(machine())
    for rnd in range(args.rounds):
        threads = {side: uuid.uuid4().hex for side in SIDES}
        for i, question in enumerate(questions):
            for side in rotations(SIDES, rnd * len(questions) + i):
                started = time.perf_counter()
                run(side, agent, question, threads[side])
                times[side].append(time.perf_counter() - started)
    agent.close()
    figures: dict[str, float] = {}
    for side in SIDES:
        figures[f"{side} p50 ms"] = statistics.median(times[side]) * 1000
        print(f"{side:>12}: p50 {ms(statistics.median(times[side]))} ms over {len(times[side])} turns")
    for side in SIDES[:2]:
        figures[f"{side} / agent exit"] = median_ratio(times[side], times["agent exit"])
        print(f"{side} / agent exit: {figures[f'{side} / agent exit']:.3f}x (median of paired ratios)")
    reading = median_ratio(times["agent sync"], times["agent sync, no reader"])
    figures["agent sync / no reader"] = reading
    print(f"agent sync / agent sync, no reader: {reading:.3f}x (median of paired ratios; the reading model's cost)")
    saved = statistics.median(times["agent sync"]) - statistics.median(times["agent async"])
    print(f"sync - async per turn: {ms(saved)} ms (difference of medians)")
    return figures


def run(side: str, agent: Agent, question: str, thread: str) -> Any:
    """Run one side once."""
    rag_agent.service.DURABILITY = side.split()[1].rstrip(",")  # type: ignore[assignment]
    try:
        with overridden(reader=not side.endswith("no reader")):
            return agent.ask(question, thread)
    finally:
        rag_agent.service.DURABILITY = "sync"


if __name__ == "__main__":
    main()
