"""A password inside OPENAI_BASE_URL (or QDRANT_URL) is never printed by `config` nor logged (issue 15, case 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.stub_server import serve
from tests.integration.test_openai_stub import PAGE, StubOpenAI
from tools import vectorstore
from tools.embeddings import HashEmbeddings
from tools.ingest import ingest_folder

PASSWORD = "pw-Tr0ub4dor"
CLI = str(Path(sys.executable).with_name("rag-agent"))


def _env(data: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COHERE_API_KEY", "QDRANT_URL")}
    return env | {"RAG_AGENT_DATA_DIR": str(data), "RAG_AGENT_EMBEDDING_MODEL": "hash/256",
                  "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url, "RAG_AGENT_LOG_LEVEL": "INFO"}


def test_config_masks_passwords_in_urls(tmp_path: Path) -> None:
    env = _env(tmp_path, f"http://bob:{PASSWORD}@127.0.0.1:9/v1") | {"QDRANT_URL": f"http://q:{PASSWORD}@127.0.0.1:9"}
    text = subprocess.run([CLI, "config"], capture_output=True, text=True, env=env, timeout=120)
    as_json = subprocess.run([CLI, "config", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr
    settings = json.loads(as_json.stdout)
    assert "http://bob:***@127.0.0.1:9/v1" in settings["chat"] and "q:***@" in settings["vector_store"]
    assert "bob:***@127.0.0.1:9/v1" in text.stdout  # the operator still sees which server it is
    for out in (text.stdout, text.stderr, as_json.stdout, as_json.stderr):
        assert PASSWORD not in out


def test_httpx_request_logs_never_show_the_password(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "isaac.md").write_text(PAGE)
    ingest_folder(tmp_path / "docs", data_dir=tmp_path / "data", collection="docs", embeddings=HashEmbeddings(256),
                  embedding_model="hash/256", progress=False)
    vectorstore.close_clients()
    StubOpenAI.calls, StubOpenAI.delay, StubOpenAI.script = [], 0.0, [(200, "Isaac Sim is a simulator [1].")]
    with serve(StubOpenAI) as url:
        base = url.replace("http://", f"http://bob:{PASSWORD}@") + "/v1"
        run = subprocess.run([CLI, "ask", "--json", "--threshold", "0.1", "What is Isaac Sim?"],
                             capture_output=True, text=True, env=_env(tmp_path / "data", base), timeout=180)
    assert run.returncode == 0 and StubOpenAI.calls, run.stderr
    assert "HTTP Request: POST" in run.stderr  # httpx did log the request at INFO
    assert PASSWORD not in run.stderr and PASSWORD not in run.stdout
