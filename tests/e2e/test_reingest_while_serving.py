"""Readers keep answering while an ingest rewrites the index: four `ask` processes and `langgraph dev` at once."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.e2e import devserver

pytestmark = pytest.mark.e2e

QUESTION = "What is Isaac Sim?"
CONTEXT = {"score_threshold": 0.2}
# Enough pages that the rewrite takes a few seconds with the hash embedder, so readers ask throughout it.
FILLER_PAGES = 400


def filler(n: int) -> str:
    """A page about something else, so the Isaac Sim page stays the answer."""
    return f"# Pottery note {n}\n\nGlaze batch {n} fires at cone {n % 10} in the kiln for {n % 7 + 5} hours.\n"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[devserver.DevServer, Path]]:
    devserver.require_langgraph()
    # One client asks as fast as it can here: the per-visitor and per-IP limits are not what is tested.
    env = devserver.prepare(tmp_path, RAG_AGENT_RATE_LIMIT_VISITOR="off", RAG_AGENT_RATE_LIMIT_IP="off")
    running = devserver.start(tmp_path, env)
    try:
        yield running, tmp_path / "docs"
    finally:
        running.stop()


def ask_loop(env: dict[str, str], until: Path) -> subprocess.Popen[str]:
    """A process that asks the question again and again until `until` exists, printing each JSON answer."""
    script = (
        "import json, pathlib, subprocess, sys\n"
        "stop = pathlib.Path(sys.argv[1])\n"
        "while True:\n"
        "    last = stop.exists()\n"
        f"    done = subprocess.run([{str(devserver.RAG_AGENT)!r}, 'ask', '--json', '--threshold', '0.2', "
        f"{QUESTION!r}], capture_output=True, text=True)\n"
        "    print(json.dumps({'code': done.returncode, 'out': done.stdout, 'err': done.stderr[-500:]}), flush=True)\n"
        "    if last:\n"
        "        break\n"
    )
    return subprocess.Popen([str(devserver.BIN / "python"), "-c", script, str(until)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_four_ask_processes_and_the_server_answer_while_an_ingest_rewrites_the_index(
        served: tuple[devserver.DevServer, Path], tmp_path: Path) -> None:
    server, docs = served
    for n in range(FILLER_PAGES):
        (docs / f"pottery-{n:03d}.md").write_text(filler(n), encoding="utf-8")
    (docs / "isaac-lab.md").write_text("# Isaac Lab\n\nIsaac Lab trains robot policies with reinforcement "
                                       "learning on top of Isaac Sim.\n", encoding="utf-8")
    finished = tmp_path / "ingest-finished"
    readers = [ask_loop(server.env, finished) for _ in range(4)]
    client = get_sync_client(url=server.url, api_key=None, timeout=120)
    ingest = subprocess.Popen([str(devserver.RAG_AGENT), "ingest", str(docs), "--recreate"], env=server.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    served_answers = []
    try:
        while ingest.poll() is None:
            thread = client.threads.create()
            served_answers.append(client.runs.wait(thread["thread_id"], "agent", context=CONTEXT,
                                                   input={"messages": [{"role": "user", "content": QUESTION}]}))
        _, ingest_err = ingest.communicate(timeout=600)
    finally:
        finished.touch()
        outputs = [reader.communicate(timeout=600)[0] for reader in readers]
    assert ingest.returncode == 0, ingest_err[-2000:]
    # The server answered throughout, from the Isaac Sim page, whichever snapshot it read (the new one may add
    # the Isaac Lab page as a second source).
    assert served_answers, "the ingest ended before the server was asked once"
    for answer in served_answers:
        assert isinstance(answer, dict) and answer["status"] == "grounded", (answer, server.log_tail())
        assert "isaac-sim.md" in {c["source"] for c in answer["citations"]}
    # Each reader process answered every time, during the rewrite and after it.
    for output in outputs:
        turns = [json.loads(line) for line in output.splitlines()]
        assert len(turns) >= 2, output
        for turn in turns:
            assert turn["code"] == 0, turn["err"]
            answer = json.loads(turn["out"])
            assert answer["status"] == "grounded" and "isaac-sim.md" in {c["source"] for c in answer["citations"]}
    # The rewritten index is what readers see next: the page added by the re-ingest is found.
    after = subprocess.run([str(devserver.RAG_AGENT), "ask", "--json", "--threshold", "0.2",
                            "What does Isaac Lab train robot policies with?"], env=server.env, capture_output=True,
                           text=True, timeout=300)
    assert after.returncode == 0, after.stderr
    assert "isaac-lab.md" in {c["source"] for c in json.loads(after.stdout)["citations"]}
