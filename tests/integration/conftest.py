import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
CORPUS = SHARED / "textbook" / "corpus"
RAG_AGENT = str(Path(sys.executable).with_name("rag-agent"))


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_URL"}}
    return env | {"RAG_AGENT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RAG_AGENT, *args], capture_output=True, text=True, env=cli_env(data_dir), timeout=600)


@pytest.fixture(scope="session")
def textbook_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with the shared textbook ingested once through the real CLI (real embedder, local Qdrant)."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared textbook corpus not found at {CORPUS}; clone ../shared beside the project")
    data_dir = tmp_path_factory.mktemp("textbook")
    result = run_cli(data_dir, "ingest", str(CORPUS))
    assert result.returncode == 0, result.stderr
    assert "added 36" in result.stdout
    return data_dir
