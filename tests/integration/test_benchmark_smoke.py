"""Every benchmark script runs end to end at tiny sizes, so none can rot between the runs that measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_agent.cli.commands import main as cli
from tools import vectorstore

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RAG_AGENT_SHARED", ROOT.parent / "shared")) / "eval"
TEXTBOOK = SHARED / "textbook"

pytestmark = pytest.mark.skipif(not TEXTBOOK.is_dir(), reason=f"benchmark smoke runs skipped: they read {TEXTBOOK}")


def run(script: str, *args: str, timeout: float = 600) -> str:
    """Run a benchmark script as a user would; return its output, failing with it when the script fails."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL")) and k != "QDRANT_URL"}
    env.update(HF_HUB_OFFLINE="1", RAG_AGENT_EMBEDDING_MODEL="hash/256", LANGSMITH_TRACING="false")
    # As a module from the project root (`python -m benchmarks.x`), the form every script supports.
    done = subprocess.run([sys.executable, "-m", f"benchmarks.{script.removesuffix('.py')}", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_scale(tmp_path: Path) -> None:
    out = run("scale.py", "--smoke", "--data-dir", str(tmp_path / "data"))
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["chunks"] >= 400 and figures["search_p50_ms"] > 0 and figures["turn_p50_ms"] > 0
    assert 0 < figures["ingest_vs_raw_embedder"] <= 1 and figures["build_rss_mb"] > 0
    # The hash embedder gets no passage vectors, so the passages cost it nothing.
    assert figures["passages_ms_per_chunk"] == 0
    assert figures["ingest_vs_raw_embedder_with_passages"] == figures["ingest_vs_raw_embedder"]


def test_embed_batches() -> None:
    out = run("embed_batches.py", "--corpus", str(TEXTBOOK / "corpus"), "--chunks", "4", "--rounds", "1")
    lines = [line for line in out.splitlines() if line.startswith("budget")]
    # The shipped budget first, as the reference the others are measured against.
    assert len(lines) == 3 and "chunks" in lines[0] and "(1.00x the shipped)" in lines[0]


def test_warm_turn(tmp_path: Path) -> None:
    out = run("warm_turn.py", "--smoke", "--data-dir", str(tmp_path / "data"))
    assert "agent sync / agent exit:" in out and "agent async / agent exit:" in out
    assert "agent sync / agent sync, no reader:" in out


BENCH_PYTHON = ROOT / ".venv-bench" / "bin" / "python"


def test_llamaindex_side(tmp_path: Path) -> None:
    if not BENCH_PYTHON.exists():
        message = "LlamaIndex lives in the benchmark venv, which is missing: run `make bench-env`"
        if os.environ.get("CI") == "true":  # .ci/run builds it, so in CI its absence is a failure
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([str(BENCH_PYTHON), "-m", "benchmarks.llamaindex_side", "--smoke", "--data-dir",
                           str(tmp_path / "data")], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**{k: v for k, v in os.environ.items()
                                  if not k.endswith(("_API_KEY", "_BASE_URL")) and k != "QDRANT_URL"},
                               "HF_HUB_OFFLINE": "1", "LANGSMITH_TRACING": "false"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "agent / LlamaIndex (p50):" in done.stdout and "all (  6 turns)" in done.stdout





def test_sites(tmp_path: Path) -> None:
    # Two questions of each kind, one conversation, two selection cases, on the smallest site and the textbook.
    argv = ["--sites", "mkdocs,textbook", "--limit", "2", "--embedding-model", "hash/256", "--work-dir",
            str(tmp_path / "work")]
    out = run("sites.py", *argv, "--json", "--dump", str(tmp_path / "dump.jsonl"))
    figures = json.loads(out)  # --json: nothing but the JSON on stdout
    assert list(figures["sites"]) == ["mkdocs", "textbook"]
    for row in [*figures["sites"].values(), figures["macro_average"]]:
        assert {"hit_at_5", "passage_hit_at_5", "in_scope_answered", "answer_keyword_recall", "near_miss_abstention",
                "far_off_abstention", "followups_right_share", "answers_with_defects", "keyword_ece",
                "high_confidence_holding"} <= set(row)
    mkdocs = figures["sites"]["mkdocs"]
    assert (mkdocs["count_in_scope"], mkdocs["count_near_miss"], mkdocs["count_far_off"]) == (2, 2, 2)
    turns = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    assert len(turns) == sum(row["count_turns"] for row in figures["sites"].values())
    assert all({"answer", "status", "confidence", "citations"} <= set(t) for t in turns)
    stamp = tmp_path / "work" / "mkdocs" / "data" / "manifest.json"
    built = stamp.stat().st_mtime_ns
    table = run("sites.py", *argv)  # same corpus, same code: the index is reused, not rebuilt
    assert stamp.stat().st_mtime_ns == built
    assert "| mkdocs |" in table and "| **macro average** |" in table


def test_sites_answers_asks_only_in_scope_questions_with_keywords(tmp_path: Path) -> None:
    argv = ["--sites", "mkdocs", "--limit", "3", "--embedding-model", "hash/256", "--work-dir", str(tmp_path / "work"),
            "--answers", "--json", "--dump", str(tmp_path / "dump.jsonl")]
    mkdocs = json.loads(run("sites.py", *argv))["sites"]["mkdocs"]
    assert (mkdocs["count_in_scope"], mkdocs["count_near_miss"], mkdocs["count_far_off"]) == (3, 0, 0)
    assert mkdocs["count_followup_turns"] == 0 and mkdocs["answer_keyword_recall"] is not None
    turns = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    assert len(turns) == 3 and all(t["expected"] == "GROUNDED" and t["answer_keywords"] for t in turns)


def test_squad_set(tmp_path: Path) -> None:
    run("squad_set.py", str(tmp_path / "squad"), "--per-class", "2")
    assert len((tmp_path / "squad" / "questions.jsonl").read_text().splitlines()) == 4
    assert any((tmp_path / "squad" / "corpus").iterdir())


def test_mtrag(tmp_path: Path) -> None:
    out = run("mtrag.py", "--limit", "1", "--json", "--embedding-model", "hash/256")
    assert json.loads(out)


def test_confidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fit reads `rag-agent eval --report` records: make a small real report first, offline.
    for name in ("OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_URL", "RAG_AGENT_CHECKPOINTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    questions = tmp_path / "q.jsonl"
    lines = (TEXTBOOK / "textbook-questions.jsonl").read_text().splitlines()[:6]
    lines += (SHARED / "ood" / "squad2-ood-questions.jsonl").read_text().splitlines()[:6]
    questions.write_text("\n".join(lines) + "\n")
    report = tmp_path / "report.jsonl"
    assert cli(["--data-dir", str(tmp_path / "data"), "eval", str(questions), "--corpus",
                str(TEXTBOOK / "corpus" / "module-1"), "--report", str(report), "--json"]) == 0
    out = run("confidence.py", str(report), "--check", str(report))
    assert out.strip()


def test_load() -> None:
    out = run("load.py", "--conversations", "1", "--seconds", "4", "--timeout", "120")
    assert "failed runs 0; lost turns 0" in out


def test_cold_start(tmp_path: Path) -> None:
    out = run("cold_start.py", "--rounds", "1", "--corpus", str(TEXTBOOK / "corpus" / "module-1"),
              "--data-dir", str(tmp_path / "data"))
    assert "cold / (warm + interpreter start)" in out and "heavy modules a cold ask imports: none" in out
    assert "with `rag-agent warm` serving the index: `rag-agent ask`" in out


def test_answerability(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = tmp_path / "q.jsonl"
    lines = (TEXTBOOK / "textbook-questions.jsonl").read_text().splitlines()[:6]
    lines += (SHARED / "ood" / "squad2-ood-questions.jsonl").read_text().splitlines()[:6]
    questions.write_text("\n".join(lines) + "\n")
    for name in ("COHERE_API_KEY", "QDRANT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")  # a small index for the --check questions
    assert cli(["--data-dir", str(tmp_path / "data"), "ingest", str(TEXTBOOK / "corpus" / "module-1")]) == 0
    vectorstore.close_clients()  # local Qdrant admits one process: the script opens the index next
    out = run("answerability.py", "--work", str(tmp_path / "work"), "--embedding-model", "hash/256",
              "--check", str(questions), "--check-index", str(tmp_path / "data"))
    assert '"intercept"' in out and "shipped coefficients" in out


def test_conversation_gate(tmp_path: Path) -> None:
    out = run("conversation_gate.py", "--work", str(tmp_path / "work"), "--embedding-model", "hash/256",
              "--limit", "40", "--repeats", "1")
    assert "chosen on all conversations" in out and "cross-validated" in out
