"""One embedded index, many readers: processes search the exported snapshot, never the locked local Qdrant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from graph.context import Context
from rag_agent.service import Agent
from tools import embedded_index, vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

ROOT = Path(__file__).resolve().parents[2]
ASK = "import sys; from rag_agent.cli import main; sys.exit(main(sys.argv[1:]))"


def test_four_ask_processes_answer_while_the_writer_holds_the_index(data_dir: str) -> None:
    # This process keeps local Qdrant open (and locked), as a running ingest would.
    assert vectorstore.open_client(data_dir).collection_exists("docs")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "QDRANT_URL"}
    env |= {"RAG_AGENT_EMBEDDING_MODEL": "hash/256", "HF_HUB_OFFLINE": "1"}
    asks = [subprocess.Popen([sys.executable, "-c", ASK, "--data-dir", data_dir, "ask", "--json", "--threshold",
                              "0.2", "What is Isaac Sim?"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in asks]
    for code, out, err in results:
        assert code == 0, err
        answer = json.loads(out)
        assert answer["status"] == "grounded" and {c["source"] for c in answer["citations"]} == {"isaac-sim.md"}


def test_a_running_agent_sees_what_the_next_ingest_added(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "robots.md").write_text("# Robots\n\nA robot arm has joints and a gripper.\n")

    def ingest() -> None:
        ingest_folder(docs, data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                      embedding_model="hash/256", progress=False)
        vectorstore.close_clients()

    ingest()
    with Agent(Context(embedding_model="hash/256", data_dir=str(tmp_path / "data"), score_threshold=0.2),
               "memory") as agent:
        before = agent.ask("What does a lidar scanner measure?", "a")
        assert {c["source"] for c in before["citations"]} <= {"robots.md"}
        (docs / "lidar.md").write_text("# Lidar\n\nA lidar scanner measures distance with laser pulses.\n")
        ingest()
        answer = agent.ask("What does a lidar scanner measure?", "b")
    assert answer["status"] == "grounded" and answer["citations"][0]["source"] == "lidar.md"
    # Each ingest published a new snapshot; the one before it stays for readers still holding it.
    assert len([p for p in embedded_index.root(tmp_path / "data", "docs").iterdir() if p.is_dir()]) == 2
