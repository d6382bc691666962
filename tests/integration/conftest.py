import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
CORPUS = SHARED / "textbook" / "corpus"
RAG_AGENT = str(Path(sys.executable).with_name("rag-agent"))
POSTGRES = os.environ.get("RAG_AGENT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@contextmanager
def postgres_schema(what: str) -> Iterator[str]:
    """Yield a Postgres URL whose search_path is a schema of its own, dropped afterwards.

    No server: `what` is skipped with a message saying so, except under CI=true, where it must run.
    """
    import psycopg

    from rag_agent.checkpointers import redact

    try:
        admin = psycopg.connect(POSTGRES, connect_timeout=3, autocommit=True)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but Postgres at {redact(POSTGRES)} is unreachable: {exc}")
        pytest.skip(f"{what} skipped: no Postgres at {redact(POSTGRES)} "
                    "(set RAG_AGENT_TEST_POSTGRES_URL, or CI=true to require it)")
    schema = f"rag_agent_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{POSTGRES}{'&' if '?' in POSTGRES else '?'}options=-csearch_path%3D{schema}"
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


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
