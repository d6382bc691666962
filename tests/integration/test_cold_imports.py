"""A turn on the embedded index imports only what it needs: no Qdrant client, no torch, no Postgres driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.tiny_corpus import CORPUS
from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

pytestmark = pytest.mark.integration

# qdrant_client alone was most of a cold start (its sync and async clients, grpc); it only writes the index.
UNNEEDED = ("qdrant_client", "langchain_qdrant", "grpc", "torch", "transformers", "sentence_transformers",
            "psycopg", "matplotlib")
ASK_TWICE = """
import json, sys
from rag_agent.service import Agent
agent = Agent()
answers = [agent.ask("What is Isaac Sim?"), agent.ask("What is Isaac Sim?", filters={"source": "isaac-sim.md"})]
print(json.dumps({"answers": answers, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a process answering from a hybrid index of the tiny corpus, built once."""
    tmp = tmp_path_factory.mktemp("cold")
    (tmp / "docs").mkdir()
    for name, text in CORPUS.items():
        (tmp / "docs" / name).write_text(text, encoding="utf-8")
    ingest_folder(tmp / "docs", data_dir=tmp / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False, retrieval="hybrid")
    vectorstore.close_clients()  # the answering processes read the exported snapshot, never Qdrant
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "QDRANT_URL"}
    yield base | {"RAG_AGENT_DATA_DIR": str(tmp / "data"), "RAG_AGENT_EMBEDDING_MODEL": "hash/256",
                  "RAG_AGENT_CHECKPOINTER": "memory", "HF_HUB_OFFLINE": "1"}


def test_agent_turns_with_and_without_filters_import_no_qdrant_client(env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", ASK_TWICE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    everywhere, filtered = report["answers"]
    assert everywhere["status"] == "grounded" and filtered["status"] == "grounded"
    assert {c["source"] for c in filtered["citations"]} == {"isaac-sim.md"}
    assert sorted(set(report["modules"]) & set(UNNEEDED)) == []


def test_cold_cli_ask_imports_no_qdrant_client(env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rag_agent.cli.commands", "ask", "--json",
                           "What is Isaac Sim?"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["status"] == "grounded"
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "rag_agent" in imported  # importtime did report what was imported
    assert sorted(imported & set(UNNEEDED)) == []
