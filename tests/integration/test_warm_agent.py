"""`rag-agent warm`: an `ask` on a warm agent's index answers from it, as a cold process would, or in-process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_agent.cli.warm_protocol import socket_path
from tests.integration.conftest import RAG_AGENT, cli_env
from tests.tiny_corpus import CORPUS

pytestmark = pytest.mark.integration

QUESTION = "How does Isaac Sim generate synthetic data?"


def start_warm(data_dir: Path, *args: str) -> subprocess.Popen[str]:
    """Start `rag-agent warm` and return once it listens."""
    # stdin: a pipe nobody writes to, as a terminal nobody types in; reading it would wait forever.
    warm = subprocess.Popen([RAG_AGENT, "warm", *args], env=cli_env(data_dir), stdin=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert warm.stderr is not None
    line = warm.stderr.readline()  # the agent announces itself once the embedder and index are loaded
    assert "serving `rag-agent ask`" in line, line + warm.stderr.read()
    return warm


def stop(warm: subprocess.Popen[str]) -> None:
    """End a warm agent the way a service manager does."""
    warm.send_signal(signal.SIGTERM)
    warm.wait(timeout=60)


def ask(data_dir: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        stdin: str | None = None, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `rag-agent ask --json …` and return the result and the top-level modules the asking process imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", RAG_AGENT, "ask", "--json", *args], input=stdin,
                          capture_output=True, text=True, env=env or cli_env(data_dir), cwd=cwd, timeout=timeout)
    modules = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return done, modules


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with the tiny corpus ingested through the CLI (the bundled embedder)."""
    tmp = tmp_path_factory.mktemp("warm")
    (tmp / "docs").mkdir()
    for name, text in CORPUS.items():
        (tmp / "docs" / name).write_text(text, encoding="utf-8")
    done = subprocess.run([RAG_AGENT, "ingest", str(tmp / "docs")], capture_output=True, text=True,
                          env=cli_env(tmp / "data"), timeout=600)
    assert done.returncode == 0, done.stderr
    return tmp / "data"


@pytest.fixture(scope="module")
def warm(data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """A warm agent serving the data folder for the module's tests."""
    agent = start_warm(data_dir)
    yield agent
    stop(agent)
    assert agent.returncode == 0
    assert not socket_path(data_dir).exists(), "a stopped warm agent removes its socket"


def test_ask_is_answered_by_the_warm_agent_as_a_cold_process_answers(data_dir: Path,
                                                                      warm: subprocess.Popen[str]) -> None:
    done, modules = ask(data_dir, QUESTION)
    assert done.returncode == 0, done.stderr
    assert "langgraph" not in modules and "numpy" not in modules  # the asker only relayed the answer
    warm_answer = json.loads(done.stdout)
    cold = subprocess.run([sys.executable, "-m", "rag_agent.cli.commands", "ask", "--json", QUESTION],
                          capture_output=True, text=True, env=cli_env(data_dir), timeout=300)
    cold_answer = json.loads(cold.stdout)
    assert warm_answer["status"] == cold_answer["status"] == "grounded"
    assert warm_answer["answer"] == cold_answer["answer"] and "Replicator" in warm_answer["answer"]
    assert [c["source"] for c in warm_answer["citations"]] == [c["source"] for c in cold_answer["citations"]]


def test_four_asks_at_once_are_all_answered(data_dir: Path, warm: subprocess.Popen[str]) -> None:
    # The agent answers one at a time; the others wait in the socket's queue, none is refused.
    asks = [subprocess.Popen([RAG_AGENT, "ask", "--json", QUESTION], env=cli_env(data_dir), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    results = [(a.communicate(timeout=300), a.returncode) for a in asks]
    assert [code for _, code in results] == [0] * 4, [err for (_, err), _ in results]
    assert {json.loads(out)["status"] for (out, _), _ in results} == {"grounded"}


def test_a_thread_continues_across_warm_asks(data_dir: Path, warm: subprocess.Popen[str]) -> None:
    first, _ = ask(data_dir, "--thread", "warm-1", "What is Isaac Sim?")
    second, modules = ask(data_dir, "--thread", "warm-1", "How does it generate synthetic data?")
    assert "langgraph" not in modules
    assert json.loads(first.stdout)["turn"] == 1 and json.loads(second.stdout)["turn"] == 2
    assert "Isaac Sim" in json.loads(second.stdout)["retrieval_query"]


def test_errors_and_relative_files_behave_as_in_process(data_dir: Path, warm: subprocess.Popen[str],
                                                        tmp_path: Path) -> None:
    blank, _ = ask(data_dir, "   ")
    assert blank.returncode == 2 and json.loads(blank.stdout)["error"]["code"] == "INVALID_INPUT"
    (tmp_path / "selection.txt").write_text("The gripper closes with 40 newtons of force.", encoding="utf-8")
    selected, modules = ask(data_dir, "--context", "selection.txt", "What force does the gripper close with?",
                            cwd=tmp_path)
    assert selected.returncode == 0, selected.stderr
    assert "langgraph" not in modules and "40 newtons" in json.loads(selected.stdout)["answer"]
    missing, _ = ask(data_dir, "--context", "nowhere.txt", "What is this?", cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read the --context file nowhere.txt" in missing.stderr
    usage, _ = ask(data_dir, "--top-k")
    assert usage.returncode == 2 and "--top-k: expected one argument" in usage.stderr


@pytest.mark.parametrize("spelling", [["--context", "-"], ["--context=-"], ["--cont", "-"]])
def test_a_selection_on_stdin_is_read_in_process_and_the_agent_keeps_serving(
        data_dir: Path, warm: subprocess.Popen[str], spelling: list[str]) -> None:
    selected, modules = ask(data_dir, *spelling, "What force does the gripper close with?",
                            stdin="The gripper closes with 40 newtons of force.", timeout=120)
    assert selected.returncode == 0, selected.stderr
    assert "langgraph" in modules  # answered here: only this process can read its own stdin
    assert "40 newtons" in json.loads(selected.stdout)["answer"]
    after, modules = ask(data_dir, QUESTION, timeout=120)  # a hung agent would hold every later ask
    assert after.returncode == 0 and "langgraph" not in modules
    assert warm.poll() is None


def test_other_settings_are_answered_in_process(data_dir: Path, warm: subprocess.Popen[str]) -> None:
    # The warm agent was started without RAG_AGENT_TOP_K: it declines rather than answer with its own.
    done, modules = ask(data_dir, QUESTION, env=cli_env(data_dir) | {"RAG_AGENT_TOP_K": "1"})
    assert done.returncode == 0, done.stderr
    assert "langgraph" in modules and len(json.loads(done.stdout)["citations"]) == 1


def test_a_reingested_index_is_searched_by_the_warm_agent(data_dir: Path, warm: subprocess.Popen[str]) -> None:
    docs = data_dir.parent / "docs"
    (docs / "gripper.md").write_text("# Gripper\n\nThe parallel gripper is calibrated with the zeroing routine "
                                     "before each shift.\n", encoding="utf-8")
    ingested = subprocess.run([RAG_AGENT, "ingest", str(docs)], capture_output=True, text=True,
                              env=cli_env(data_dir), timeout=600)
    assert ingested.returncode == 0, ingested.stderr  # ingest, the one writer, runs beside the warm reader
    done, modules = ask(data_dir, "How is the parallel gripper calibrated?")
    assert "langgraph" not in modules
    assert "gripper.md" in {c["source"] for c in json.loads(done.stdout)["citations"]}


def test_a_second_warm_agent_on_the_index_is_refused(data_dir: Path, warm: subprocess.Popen[str]) -> None:
    done = subprocess.run([RAG_AGENT, "warm"], capture_output=True, text=True, env=cli_env(data_dir), timeout=300)
    assert done.returncode != 0 and "a warm agent already serves this index" in done.stderr


def test_a_killed_or_idle_agent_leaves_ask_working(tmp_path: Path, data_dir: Path,
                                                   warm: subprocess.Popen[str]) -> None:
    # Another data folder pointing at the same index files, so the module's warm agent is not disturbed.
    other = tmp_path / "data"
    subprocess.run(["cp", "-r", str(data_dir), str(other)], check=True)
    killed = start_warm(other)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert socket_path(other).exists()  # left behind by kill -9
    done, modules = ask(other, QUESTION)
    assert done.returncode == 0 and "langgraph" in modules  # answered in-process
    idle = start_warm(other, "--idle-minutes", "0.02")  # replaces the dead agent's socket
    deadline = time.monotonic() + 120
    while idle.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert idle.returncode == 0 and not socket_path(other).exists()
    assert idle.stderr is not None and "idle, stopping" in idle.stderr.read()
    assert os.path.isdir(socket_path(other).parent)
