"""The `indexer` graph on a real `langgraph dev`, run through langgraph-sdk: the admin re-indexes, others are refused.

Also creates the documented nightly cron, so the schedule in docs/deploy.md is one the server accepts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from tests.e2e import devserver
from tests.tiny_corpus import CORPUS

pytestmark = pytest.mark.e2e

KEYS = {"root": "root-token-1", "bob": "bob-token-2"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[devserver.DevServer, str]]:
    if not devserver.LANGGRAPH.exists():
        message = f"indexer end-to-end tests need {devserver.LANGGRAPH} (install the `server` extra)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    workdir = tmp_path_factory.mktemp("indexer")
    docs = workdir / "docs"  # prepare() writes the tiny corpus here and ingests it once
    env = devserver.prepare(workdir, RAG_AGENT_API_KEYS=",".join(f"{u}:{t}" for u, t in KEYS.items()),
                            RAG_AGENT_ADMINS="root", RAG_AGENT_INDEX_SOURCES=str(docs))
    running = devserver.start(workdir, env)
    try:
        yield running, str(docs)
    finally:
        running.stop()


def client(server: devserver.DevServer, user: str) -> SyncLangGraphClient:
    return get_sync_client(url=server.url, api_key=None, headers={"Authorization": f"Bearer {KEYS[user]}"},
                           timeout=120)


def test_admin_reindex_picks_up_a_new_page(server: tuple[devserver.DevServer, str]) -> None:
    running, docs = server
    (running.workdir / "docs" / "oven.md").write_text("# Oven care\n\nClean the oven door with vinegar.\n", "utf-8")
    result: Any = client(running, "root").runs.wait(None, "indexer", input={"source": docs})
    assert (result["added"], result["unchanged"], result["removed"]) == (1, len(CORPUS), 0), result


def test_non_admin_is_refused_with_a_clear_error(server: tuple[devserver.DevServer, str]) -> None:
    running, docs = server
    result: Any = client(running, "bob").runs.wait(None, "indexer", input={"source": docs}, raise_error=False)
    assert "user 'bob' may not re-index" in str(result), result


def test_source_outside_the_allow_list_is_refused(server: tuple[devserver.DevServer, str]) -> None:
    running, _ = server
    result: Any = client(running, "root").runs.wait(None, "indexer", input={"source": "/etc"}, raise_error=False)
    assert "'/etc' is not in RAG_AGENT_INDEX_SOURCES" in str(result), result


def test_nightly_cron_as_documented_is_accepted(server: tuple[devserver.DevServer, str]) -> None:
    running, docs = server
    root = client(running, "root")
    cron = root.crons.create("indexer", schedule="0 3 * * *", input={"source": docs})
    assert cron["schedule"] == "0 3 * * *"
    [assistant] = root.assistants.search(graph_id="indexer")
    listed = root.crons.search(assistant_id=assistant["assistant_id"])
    assert [(c["cron_id"], c["payload"]["input"]) for c in listed] == [(cron["cron_id"], {"source": docs})]
