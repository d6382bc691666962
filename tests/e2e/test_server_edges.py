"""Server rough edges under `langgraph dev` (issue 15, case 10): refused input, crons, assistants, docs and metrics.

One server for the module, with owner-based auth on, driven through the real `langgraph-sdk` client and httpx.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from tests.e2e import devserver

pytestmark = pytest.mark.e2e

KEYS = {"alice": "alice-edge-token", "bob": "bob-edge-token"}
CONTEXT = {"score_threshold": 0.2}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devserver.DevServer]:
    devserver.require_langgraph()
    workdir = tmp_path_factory.mktemp("edges")
    env = devserver.prepare(workdir, RAG_AGENT_API_KEYS=",".join(f"{u}:{t}" for u, t in KEYS.items()))
    running = devserver.start(workdir, env)
    try:
        yield running
    finally:
        running.stop()


def client(server: devserver.DevServer, user: str) -> SyncLangGraphClient:
    return get_sync_client(url=server.url, api_key=None, headers={"Authorization": f"Bearer {KEYS[user]}"},
                           timeout=60)


def messages_of(alice: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any]]:
    values = alice.threads.get_state(thread_id)["values"]
    assert isinstance(values, dict)
    return list(values.get("messages", []))


def first_turn(alice: SyncLangGraphClient) -> str:
    thread = alice.threads.create()
    run = alice.runs.wait(thread["thread_id"], "agent", context=CONTEXT,
                          input={"messages": [{"role": "user", "content": "What is Isaac Sim?"}]})
    assert run["status"] == "grounded", run  # type: ignore[index,call-overload]
    return str(thread["thread_id"])


@pytest.mark.parametrize("content", [42, {"text": "hi"}, [1, 2]], ids=["int", "object", "list of numbers"])
def test_non_string_content_is_invalid_input_and_not_stored(server: devserver.DevServer, content: object) -> None:
    alice = client(server, "alice")
    thread_id = first_turn(alice)
    run = alice.runs.wait(thread_id, "agent", context=CONTEXT,
                          input={"messages": [{"role": "user", "content": content}]})
    assert isinstance(run, dict) and "__error__" not in run, run
    assert run["error"]["code"] == "INVALID_INPUT" and "plain text" in run["answer"]
    assert "validation error" not in str(run).lower()
    assert [m["type"] for m in messages_of(alice, thread_id)] == ["human", "ai"]


def test_a_one_megabyte_message_is_refused_and_not_stored(server: devserver.DevServer) -> None:
    alice = client(server, "alice")
    thread_id = first_turn(alice)
    huge = "why " * 250_000
    try:
        run = alice.runs.wait(thread_id, "agent", context=CONTEXT, input={"messages": [{"role": "user",
                                                                                          "content": huge}]})
        assert run["error"]["code"] == "INVALID_INPUT" and "too long" in run["answer"]  # type: ignore[index,call-overload]
    except httpx.HTTPStatusError as refused:  # a size limit in front of the graph is fine too
        assert refused.response.status_code == 413
    assert [m["type"] for m in messages_of(alice, thread_id)] == ["human", "ai"]
    history = alice.threads.get_history(thread_id, limit=50)
    assert all(len(str(h["values"])) < 100_000 for h in history)  # not in any checkpoint either


def test_a_turn_refused_for_a_bad_filter_is_not_stored(server: devserver.DevServer) -> None:
    alice = client(server, "alice")
    thread_id = first_turn(alice)
    run = alice.runs.wait(thread_id, "agent", context=CONTEXT,
                          input={"messages": [{"role": "user", "content": "What is Isaac Sim?"}],
                                 "filters": {"source": "no-such-page"}})
    assert run["error"]["code"] == "INVALID_INPUT"  # type: ignore[index,call-overload]
    assert [m["type"] for m in messages_of(alice, thread_id)] == ["human", "ai"]
    values = alice.threads.get_state(thread_id)["values"]
    assert values["turns"] == 1  # type: ignore[call-overload,index]


@pytest.mark.parametrize("schedule", ["* * * * *", "*/5 * * * *", "0,30 * * * *"])
def test_crons_that_run_more_than_hourly_are_refused(server: devserver.DevServer, schedule: str) -> None:
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client(server, "alice").crons.create("agent", schedule=schedule, input={"messages": []})
    assert refused.value.response.status_code == 403
    assert "at most once every 60 minutes" in refused.value.response.text


def test_a_daily_cron_is_allowed_and_only_its_owner_sees_it(server: devserver.DevServer) -> None:
    alice, bob = client(server, "alice"), client(server, "bob")
    cron = alice.crons.create("agent", schedule="0 3 * * *", context=CONTEXT,
                              input={"messages": [{"role": "user", "content": "What is Isaac Sim?"}]})
    try:
        assert cron["cron_id"] in {c["cron_id"] for c in alice.crons.search(limit=100)}
        assert cron["cron_id"] not in {c["cron_id"] for c in bob.crons.search(limit=100)}
    finally:
        alice.crons.delete(cron["cron_id"])


def test_users_do_not_see_assistants_other_users_created(server: devserver.DevServer) -> None:
    alice, bob = client(server, "alice"), client(server, "bob")
    mine = alice.assistants.create("agent", name="alice's tuned agent", context={"top_k": 3},
                                   metadata={"created_by": "system"})  # cannot pass itself off as the server's
    assert mine["metadata"]["owner"] == "alice" and "created_by" not in mine["metadata"]
    seen_by_bob = {a["assistant_id"] for a in bob.assistants.search(limit=100)}
    assert mine["assistant_id"] not in seen_by_bob
    assert any(a["graph_id"] == "agent" for a in bob.assistants.search(graph_id="agent"))  # the server's own
    for attempt in (lambda: bob.assistants.get(mine["assistant_id"]),
                    lambda: bob.assistants.update(mine["assistant_id"], name="bob's now"),
                    lambda: bob.assistants.delete(mine["assistant_id"])):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            attempt()
        assert refused.value.response.status_code in {403, 404}
    assert mine["assistant_id"] in {a["assistant_id"] for a in alice.assistants.search(limit=100)}


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/metrics"])
def test_api_docs_and_metrics_need_a_token(server: devserver.DevServer, path: str) -> None:
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as http:
        assert http.get(path).status_code == 401
        assert http.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert http.get(path, headers={"Authorization": f"Bearer {KEYS['bob']}"}).status_code == 200
        assert http.get("/ok").status_code == 200  # health checks stay open
