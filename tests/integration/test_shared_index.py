"""One embedded index, many readers: `rag-agent ask` processes search the exported snapshot, never the locked Qdrant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tiny_corpus import CORPUS
from tools.embedded_store import EmbeddedStore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

ROOT = Path(__file__).resolve().parents[2]
ASK = "import sys; from rag_agent.cli.commands import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[str]:
    """A data directory holding the tiny corpus, indexed with the hash embedder (as tests/unit's fixture)."""
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in CORPUS.items():
        (root / name).write_text(text, encoding="utf-8")
    ingest_folder(root, data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    yield str(tmp_path / "data")


def test_four_ask_processes_answer_while_the_writer_holds_the_index(data_dir: str) -> None:
    # This process holds the index's write lock with a started write log, as a running ingest does.
    writer = EmbeddedStore(data_dir, "docs")
    assert writer.exists()
    writer.delete_sources(["isaac-sim.md"])  # written to the log only: readers see it once a merge publishes
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "QDRANT_URL"}
    env |= {"RAG_AGENT_EMBEDDING_MODEL": "hash/256", "HF_HUB_OFFLINE": "1"}
    asks = [subprocess.Popen([sys.executable, "-c", ASK, "--data-dir", data_dir, "ask", "--json", "--threshold",
                              "0.2", "What is Isaac Sim?"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in asks]
    writer.close()
    for code, out, err in results:
        assert code == 0, err
        answer = json.loads(out)
        assert answer["status"] == "grounded" and {c["source"] for c in answer["citations"]} == {"isaac-sim.md"}
