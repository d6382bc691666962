"""Two server replicas sharing Postgres and Redis, as in deploy/docker-compose.yml scaled to two API containers.

Two `langgraph dev` processes (the same API code as the image) with the stack's settings: a visitor's rate limit
holds across both (Redis), and the turn records of both land in one Postgres that `rag-agent report` reads.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.e2e import devserver
from tests.integration.conftest import postgres_schema
from tests.integration.test_redis_limits import require_redis

pytestmark = pytest.mark.e2e



@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A URL whose search_path is a schema of its own, dropped afterwards."""
    with postgres_schema("shared-stack test") as url:
        yield url


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[list[devserver.DevServer]]:
    redis_url = require_redis()
    settings = {"RAG_AGENT_CHECKPOINTER": pg_url, "RAG_AGENT_REDIS_URL": redis_url,
                "RAG_AGENT_VISITOR_SECRET": "stack-test-" + uuid.uuid4().hex,
                "RAG_AGENT_RATE_LIMIT_VISITOR": "2/600", "RAG_AGENT_RATE_LIMIT_IP": "off"}
    servers: list[devserver.DevServer] = []
    try:
        for name in ("a", "b"):  # each its own index copy: embedded Qdrant allows one process per folder
            workdir = tmp_path_factory.mktemp(f"replica-{name}")
            servers.append(devserver.start(workdir, devserver.prepare(workdir, **settings)))
        yield servers
    finally:
        for server in servers:
            server.stop()


def ask(server: devserver.DevServer, token: str, question: str) -> httpx.Response:
    """Start a turn as the widget does (a `values` stream) on a new thread of this replica, read to its end."""
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120,
                      trust_env=False) as client:
        thread = client.post("/threads", json={})
        assert thread.status_code == 200, thread.text
        turn = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": question}]},
                "stream_mode": ["values"]}
        return client.post(f"/threads/{thread.json()['thread_id']}/runs/stream", json=turn)


def test_a_visitor_limit_holds_across_replicas_and_records_from_both_reach_one_report(
        replicas: list[devserver.DevServer], pg_url: str, tmp_path: Path) -> None:
    a, b = replicas
    token = httpx.post(f"{a.url}/widget/token", json={}, trust_env=False, timeout=30).json()["token"]
    first, second = ask(a, token, "How do I ingest my documentation?"), ask(b, token, "How do I configure the agent?")
    assert first.status_code == 200 and second.status_code == 200, (first.text, second.text)
    # The visitor's third run in ten minutes is refused on either replica: the two counted together in Redis.
    for server in (a, b):
        refused = ask(server, token, "And a third question?")
        assert refused.status_code == 429 and "Please wait" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 500

    with psycopg.connect(pg_url) as conn:
        questions = {row[0] for row in conn.execute("SELECT question FROM rag_agent_turns")}
    assert questions == {"How do I ingest my documentation?", "How do I configure the agent?"}
    env = devserver.server_env(tmp_path) | {"RAG_AGENT_CHECKPOINTER": pg_url}
    report = subprocess.run([str(devserver.RAG_AGENT), "report", "--json", "--since", "1d"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    assert json.loads(report.stdout)["turns"] == 2
