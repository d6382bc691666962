"""The issue's acceptance checks, through the installed `rag-agent` command on the shared textbook."""

import json
import os
import subprocess
from pathlib import Path

from tests.integration.conftest import CORPUS, RAG_AGENT, cli_env, run_cli


def ask_json(data_dir: Path, *args: str) -> tuple[int, dict]:
    result = run_cli(data_dir, "ask", "--json", *args)
    return result.returncode, json.loads(result.stdout)


def test_in_scope_question_is_grounded_with_a_citation(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "What is Isaac Sim?")
    assert code == 0
    assert out["status"] == "grounded" and out["grounded"] is True
    assert "module-3/isaac-sim-setup.md" in {c["source"] for c in out["citations"]}
    assert all(f"[{c['index']}]" in out["answer"] for c in out["citations"])
    assert out["embedding_model"] == "local/all-MiniLM-L6-v2"
    assert out["gate_score"] >= out["threshold"]


def test_out_of_scope_question_is_not_found(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "What's the weather today?")
    assert code == 0
    assert out["status"] == "not_found"
    assert "I don't have information" in out["answer"]
    assert out["citations"] == []


def test_follow_up_on_a_thread_resolves_the_pronoun(textbook_dir: Path) -> None:
    first = run_cli(textbook_dir, "ask", "--thread", "t1", "What is Isaac Sim?")
    assert first.returncode == 0, first.stderr
    code, out = ask_json(textbook_dir, "--thread", "t1", "How do I use it for synthetic data?")
    assert code == 0 and out["turn"] == 2
    assert "Isaac Sim" in out["retrieval_query"]
    assert "module-3/synthetic-data-generation.md" in {c["source"] for c in out["citations"]}


def test_blank_question_exits_2_with_a_clear_message(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "   ")
    assert code == 2
    assert out["status"] == "error"
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "empty" in out["error"]["message"]


def test_reingest_is_idempotent(textbook_dir: Path) -> None:
    before = json.loads((textbook_dir / "manifest.json").read_text())["collections"]["docs"]["chunks"]
    result = run_cli(textbook_dir, "ingest", str(CORPUS))
    assert result.returncode == 0, result.stderr
    assert "added 0, updated 0, removed 0, unchanged 36" in result.stdout
    assert "0 chunks embedded" in result.stdout  # nothing changed, so nothing is re-embedded
    assert f"{before} chunks in 'docs'" in result.stdout


# Written for this test (not from the corpus): a reader's notes on arm kinematics.
KINEMATICS_SELECTION = """\
# Arm kinematics notes

Forward kinematics takes the joint angles of a serial robot arm and computes the position and orientation
of its end effector, by chaining one homogeneous transform per link.

Inverse kinematics runs the other way: given a target pose for the gripper, it solves for joint angles that
reach it. A redundant arm may have infinitely many solutions, and some poses have none.
"""


def test_context_selection_is_the_only_source(textbook_dir: Path, tmp_path: Path) -> None:
    selection = tmp_path / "selection.txt"
    selection.write_text(KINEMATICS_SELECTION)
    code, out = ask_json(textbook_dir, "--context", str(selection), "What does inverse kinematics solve for?")
    assert code == 0
    assert out["status"] == "grounded"
    assert {c["source"] for c in out["citations"]} == {"selection"}
    assert all(c["source_url"].startswith("selection#part-") for c in out["citations"])
    assert "joint angles" in out["answer"]

    code, out = ask_json(textbook_dir, "--context", str(selection), "How is a Bitcoin block mined?")
    assert code == 0
    assert out["status"] == "not_found"
    assert out["citations"] == []
    assert out["not_found"]["reason"] == "below_threshold"
    assert "in your selection" in out["answer"]


def test_module_filter_only_cites_that_module(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "--filter", "module=module-3", "How do I set up Isaac Sim?")
    assert code == 0 and out["status"] == "grounded"
    assert out["citations"]
    assert {c["source"].split("/")[0] for c in out["retrieved"]} == {"module-3"}


def test_filter_that_hides_the_answer_says_where_it_is(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "--filter", "module=module-3", "What is DDS and why does ROS 2 use it?")
    assert code == 0 and out["status"] == "not_found"
    assert out["not_found"]["reason"] == "filtered_out"
    assert "in module-3; module-1 covers it" in out["answer"]
    assert out["not_found"]["nearest"][0]["source_url"].startswith("module-1/ros2-architecture.md#")


def test_unknown_module_exits_2_naming_the_known_ones(textbook_dir: Path) -> None:
    code, out = ask_json(textbook_dir, "--filter", "module=nope", "What is Isaac Sim?")
    assert code == 2
    assert out["error"]["code"] == "INVALID_INPUT"
    assert "'nope'" in out["error"]["message"]
    assert "module-1, module-2, module-3, module-4" in out["error"]["message"]


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    # `rag-agent … | head -1`: the pipe's reader is gone before the output is written.
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([RAG_AGENT, "config"], stdout=write, stderr=subprocess.PIPE, text=True,
                                env=cli_env(tmp_path), timeout=120)
    finally:
        os.close(write)
    assert result.returncode == 141, result.stderr
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
