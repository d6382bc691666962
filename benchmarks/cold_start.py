"""Cold start of `rag-agent ask` against a warm turn in one process, and whether torch is ever imported.

Run from the project root (the first run ingests the shared textbook into --data-dir):

    .venv/bin/python -m benchmarks.cold_start                    # 5 rounds on the textbook
    .venv/bin/python -m benchmarks.cold_start --rounds 1 --corpus tests/fixtures/x --data-dir /tmp/x   # quick look

Per round, back to back: `python -c pass` (interpreter start) and a cold `rag-agent ask --json` (a new
process: imports, loading the embedder, opening the index, one turn). Then as many `rag-agent ask`
processes answered by a warm agent (`rag-agent warm`: the asker relays, the agent loaded everything
once), and as many warm turns in this process (an Agent that has answered once already). Prints the
medians, the ratios to (warm turn + interpreter start) (goal <= 3), the cold wall time (goal <= 2.5 s
on a quiet machine), and the modules of qdrant_client / torch / transformers / psycopg / matplotlib
the cold ask imported (goal: none; Qdrant is only for ingest and QDRANT_URL).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import machine

ROOT = Path(__file__).resolve().parents[1]
TEXTBOOK = ROOT.parent / "shared" / "eval" / "textbook" / "corpus"
QUESTIONS = ["What is Isaac Sim?", "Which QoS policy decides whether late-joining subscribers receive old messages?",
             "How do I declare and read parameters in an rclpy node?"]
HEAVY = ("qdrant_client", "langchain_qdrant", "grpc", "torch", "transformers", "sentence_transformers", "psycopg",
         "matplotlib", "scipy", "sympy")
RAG_AGENT = str(Path(sys.executable).with_name("rag-agent"))


CPU: list[float] = []  # CPU seconds (user + system) of each command `wall` ran: less sensitive to a busy machine


def wall(command: list[str], env: dict[str, str]) -> float:
    """Run a command to its end and return its wall time; a failure stops the benchmark."""
    before, start = os.times(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds, after = time.perf_counter() - start, os.times()
    CPU.append(after.children_user + after.children_system - before.children_user - before.children_system)
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {done.stderr[-500:]} {done.stdout[-500:]}")
    return seconds


def heavy_imports(env: dict[str, str], question: str) -> list[str]:
    """Return the heavy top-level modules a cold ask imports (python -X importtime)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rag_agent.cli.commands", "ask", "--json",
                           question], env=env, capture_output=True, text=True)
    names = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    return sorted(names & set(HEAVY))


def warm_agent_asks(env: dict[str, str], rounds: int) -> list[float]:
    """Time `rag-agent ask` processes that a warm agent (`rag-agent warm`) answers."""
    agent = subprocess.Popen([RAG_AGENT, "warm", "--idle-minutes", "10"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert agent.stderr is not None
        if "serving" not in agent.stderr.readline():
            raise SystemExit("rag-agent warm did not start")
        return [wall([RAG_AGENT, "ask", "--json", QUESTIONS[r % len(QUESTIONS)]], env) for r in range(rounds)]
    finally:
        agent.terminate()
        agent.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=TEXTBOOK)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/rag-agent-cold-start"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_URL"}}
    env |= {"RAG_AGENT_DATA_DIR": str(args.data_dir), "RAG_AGENT_CHECKPOINTER": "memory"}
    print(machine())
    if not (args.data_dir / "manifest.json").exists():
        wall([RAG_AGENT, "ingest", str(args.corpus)], env)
    start_times, colds, warms, start_cpu, cold_cpu, warm_cpu = [], [], [], [], [], []
    for round_ in range(args.rounds):
        question = QUESTIONS[round_ % len(QUESTIONS)]
        start_times.append(wall([sys.executable, "-c", "pass"], env))
        start_cpu.append(CPU[-1])
        colds.append(wall([RAG_AGENT, "ask", "--json", question], env))
        cold_cpu.append(CPU[-1])
    heavy = heavy_imports(env, QUESTIONS[0])
    relayed = warm_agent_asks(env, args.rounds)
    os.environ.update(env)
    from rag_agent.service import Agent

    agent = Agent()
    agent.ask(QUESTIONS[0])  # loads the embedder and opens the index: what makes the next turns warm
    for round_ in range(args.rounds):
        began, cpu = time.perf_counter(), time.process_time()
        agent.ask(QUESTIONS[round_ % len(QUESTIONS)])
        warms.append(time.perf_counter() - began)
        warm_cpu.append(time.process_time() - cpu)
    start, cold, warm = (statistics.median(x) for x in (start_times, colds, warms))
    print(f"interpreter start {start:.3f} s | warm turn {warm:.3f} s | cold `rag-agent ask` {cold:.3f} s "
          f"(median of {args.rounds})")
    print(f"cold / (warm + interpreter start) = {cold / (warm + start):.2f}  (goal <= 3)")
    print(f"cold wall {cold:.2f} s  (goal <= 2.5 s on a quiet machine)")
    s_cpu, c_cpu, w_cpu = (statistics.median(x) for x in (start_cpu, cold_cpu, warm_cpu))
    print(f"CPU seconds: interpreter start {s_cpu:.3f} | warm turn {w_cpu:.3f} | cold ask {c_cpu:.3f}; "
          f"cold / (warm + start) = {c_cpu / (w_cpu + s_cpu):.2f}")
    print(f"heavy modules a cold ask imports: {heavy or 'none'}")
    relay = statistics.median(relayed)
    print(f"with `rag-agent warm` serving the index: `rag-agent ask` {relay:.3f} s; "
          f"/ (warm + interpreter start) = {relay / (warm + start):.2f}  (goal <= 3)")


if __name__ == "__main__":
    main()
