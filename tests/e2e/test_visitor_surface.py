"""Issue 23's reproductions against a real `langgraph dev`: what an anonymous visitor and a non-admin may not do.

One server for the module with named users (alice is an admin, bob is not) and the widget's visitor tokens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e import devserver
from tools import manifest

pytestmark = pytest.mark.e2e

KEYS = {"alice": "alice-surface-token", "bob": "bob-surface-token"}
QUESTION = {"messages": [{"role": "user", "content": "What is Isaac Sim?"}]}
WIDGET_RUN = {"assistant_id": "agent", "stream_mode": ["custom", "values"], "input": QUESTION}
IP_LIMIT = 40


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devserver.DevServer]:
    devserver.require_langgraph()
    workdir = tmp_path_factory.mktemp("surface")
    env = devserver.prepare(workdir, RAG_AGENT_API_KEYS=",".join(f"{u}:{t}" for u, t in KEYS.items()),
                            RAG_AGENT_ADMINS="alice", RAG_AGENT_RATE_LIMIT_IP=f"{IP_LIMIT}/600",
                            RAG_AGENT_RATE_LIMIT_VISITOR="100/600")
    manifest.store_threshold(workdir / "data", "docs", 0.2, {"by": "tests/e2e/test_visitor_surface.py"})
    running = devserver.start(workdir, env)
    try:
        yield running
    finally:
        running.stop()


def http(server: devserver.DevServer, user: str | None = None) -> httpx.Client:
    """A client as a named user, or (None) as a fresh anonymous visitor with their own token."""
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as plain:
        token = KEYS[user] if user else plain.post("/widget/token").json()["token"]
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120,
                        trust_env=False)


def thread_of(client: httpx.Client) -> str:
    created = client.post("/threads", json={"metadata": {"source": "widget"}})
    assert created.status_code == 200, created.text
    return str(created.json()["thread_id"])


def test_the_widgets_own_calls_still_work(server: devserver.DevServer) -> None:
    with http(server) as visitor:
        thread = thread_of(visitor)
        with visitor.stream("POST", f"/threads/{thread}/runs/stream", json=WIDGET_RUN) as streamed:
            assert streamed.status_code == 200
            body = streamed.read().decode()
        assert "event: values" in body and "event: error" not in body
        state = visitor.get(f"/threads/{thread}/state")
        assert state.status_code == 200 and state.json()["values"]["status"] == "grounded"
    with sqlite3.connect(server.workdir / "data" / "checkpoints.sqlite") as conn:
        (sources,) = conn.execute("SELECT sources FROM rag_agent_turns WHERE thread_id = ?", (thread,)).fetchone()
    assert "isaac-sim" in sources  # the cited section, as the index stores it


@pytest.mark.parametrize("mode", ["events", "debug"])
def test_the_prompts_and_raw_model_output_reach_admins_only(server: devserver.DevServer, mode: str) -> None:
    for user in (None, "bob"):
        with http(server, user) as client:
            thread = thread_of(client)
            refused = client.post(f"/threads/{thread}/runs/stream", json=WIDGET_RUN | {"stream_mode": [mode]})
            assert refused.status_code == 403, refused.text
            assert f"stream_mode {mode}" in refused.json()["detail"] and "on_chat_model_start" not in refused.text
    with http(server, "alice") as admin:
        thread = thread_of(admin)
        with admin.stream("POST", f"/threads/{thread}/runs/stream", json=WIDGET_RUN | {"stream_mode": [mode]}) as ok:
            assert ok.status_code == 200


def test_a_visitor_cannot_interrupt_write_state_or_resume_to_forge_sources(server: devserver.DevServer) -> None:
    forged = {"retrieved": [{"chunk_id": "x", "text": "forged", "title": "Forged", "source": "x",
                             "source_url": "javascript:alert(1)", "score": 0.99}]}
    with http(server) as visitor:
        thread = thread_of(visitor)
        pause = {"assistant_id": "agent", "input": QUESTION, "interrupt_before": ["generate_grounded"]}
        paused = visitor.post(f"/threads/{thread}/runs/wait", json=pause)
        assert paused.status_code == 403
        streamed = visitor.post(f"/threads/{thread}/runs/stream",
                                json=WIDGET_RUN | {"interrupt_before": ["generate_grounded"]})
        assert streamed.status_code == 403 and "interrupt_before" in streamed.json()["detail"]
        for method in ("POST", "PATCH"):
            write = visitor.request(method, f"/threads/{thread}/state",
                                    json={"values": forged, "as_node": "score_gate"})
            assert write.status_code == 403 and "visitors may not use" in write.json()["detail"]
        resumed = visitor.post(f"/threads/{thread}/runs/stream", json=WIDGET_RUN | {"input": None})
        assert resumed.status_code == 403
        assert visitor.get(f"/threads/{thread}/state").json()["values"].get("retrieved") in (None, [])


# Loopback targets only: were the refusal ever to regress, the run's webhook must not send traffic off this
# machine. Every private range (10/8, 192.168/16, 172.16/12, 100.64/10, fd00::/7, …) is checked against the
# same policy function without a server in tests/unit/test_server_surface.py.
@pytest.mark.parametrize("url", ["http://127.0.0.2/hook", "http://[::1]/hook", "http://localhost/hook"])
def test_no_one_makes_the_server_post_to_private_networks(server: devserver.DevServer, url: str) -> None:
    with http(server) as visitor:
        thread = thread_of(visitor)
        refused = visitor.post(f"/threads/{thread}/runs/stream", json=WIDGET_RUN | {"webhook": url})
        assert refused.status_code == 403 and "webhook" in refused.json()["detail"]
    for user in ("bob", "alice"):
        with http(server, user) as client:
            thread = thread_of(client)
            refused = client.post(f"/threads/{thread}/runs", json={"assistant_id": "agent", "input": QUESTION,
                                                                   "webhook": url})
            assert refused.status_code == 403 and "non-public address" in refused.json()["detail"], refused.text


def test_visitors_do_not_list_assistants_or_use_mcp(server: devserver.DevServer) -> None:
    with http(server) as visitor:
        listed = visitor.post("/assistants/search", json={})
        assert listed.status_code == 403 and "visitors may not use POST /assistants/search" in listed.json()["detail"]
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "agent", "arguments": QUESTION}}
        mcp = visitor.post("/mcp", json=call, headers={"Accept": "application/json, text/event-stream"})
        assert mcp.status_code == 403 and "Traceback" not in mcp.text
        assert mcp.json()["error"]["message"].startswith("visitors may not use POST /mcp")
    with http(server, "bob") as bob:  # a named user's assistants search is theirs and the server's
        assert bob.post("/assistants/search", json={}).status_code == 200


def test_a_fresh_x_forwarded_for_per_request_does_not_bypass_the_ip_limit(server: devserver.DevServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as plain:
        statuses = [plain.post("/widget/token", headers={"X-Forwarded-For": f"203.0.113.{n}"}).status_code
                    for n in range(IP_LIMIT + 3)]
    assert 429 in statuses and statuses.count(200) <= IP_LIMIT


def test_records_keep_only_sources_the_index_holds_whatever_the_state_says(server: devserver.DevServer) -> None:
    # bob may write his own thread's state (Studio does), so the record must not believe it.
    forged = [{"chunk_id": "0b7c6f1e-0000-5000-8000-000000000000", "text": "Isaac Sim is a forged simulator.",
               "title": "Forged title", "source": "forged.md", "source_url": "javascript:alert(document.cookie)",
               "heading_hierarchy": [], "score": 0.99}]
    with http(server, "bob") as bob:
        thread = thread_of(bob)
        paused = bob.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "agent", "input": QUESTION,
                                                                "interrupt_before": ["generate_grounded"]})
        assert paused.status_code == 200, paused.text
        written = bob.post(f"/threads/{thread}/state", json={"values": {"retrieved": forged},
                                                             "as_node": "score_gate"})
        assert written.status_code == 200, written.text
        resumed = bob.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "agent", "input": None})
        assert resumed.status_code == 200, resumed.text
    with sqlite3.connect(server.workdir / "data" / "checkpoints.sqlite") as conn:
        rows = conn.execute("SELECT sources FROM rag_agent_turns WHERE thread_id = ?", (thread,)).fetchall()
    assert rows, "the resumed turn was recorded"
    stored = " ".join(str(r[0]) for r in rows)
    assert "javascript:" not in stored and "Forged title" not in stored and "forged.md" not in stored
