"""The server's visitor surface without a server (issue 23): the allow-list against the real route table,
webhooks to private networks, the per-IP limit behind forwarded headers, MCP over the limit, CORS and DNS
rebinding, and deeply nested JSON bodies.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from rag_agent.server import visitor_policy as policy
from rag_agent.server import visitors
from rag_agent.server.web import app as web_app
from rag_agent.server.web.middleware import Guard, OriginGate
from rag_agent.server.web.surface import SurfaceGate

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = "https://docs.example.com"
# The reviewed visitor surface: a route added to visitor_policy.VISITOR_ROUTES must be added here on purpose.
REVIEWED = {("POST", "/threads"), ("GET", "/threads/{thread_id}"), ("GET", "/threads/{thread_id}/state"),
            ("POST", "/threads/search"), ("POST", "/threads/{thread_id}/runs/stream"), ("POST", "/widget/token"),
            ("POST", "/widget/feedback"), ("GET", "/widget/feedback"), ("GET", "/widget/{name}"), ("GET", "/demo"),
            ("GET", "/demo/{path:path}"), ("GET", "/ok"), ("GET", "/")}
# What `langgraph dev` sets before the server's modules are imported (they read it at import time).
DEV_ENV = {"LANGGRAPH_RUNTIME_EDITION": "inmem", "MIGRATIONS_PATH": "__inmem", "DATABASE_URI": ":memory:",
           "REDIS_URI": "fake", "LANGGRAPH_HTTP": json.dumps({"app": "./rag_agent/server/http_app.py:app"}),
           "LANGGRAPH_AUTH": json.dumps({"path": "./rag_agent/server/auth.py:auth"}), "LANGSMITH_TRACING": "false",
           "LANGGRAPH_NO_VERSION_CHECK": "true"}
_DUMP = """
import json
from langgraph_api import api
from starlette.routing import Mount
out = []
for r in api.unshadowable_meta_routes + api.shadowable_meta_routes + api.protected_routes:
    methods = sorted(getattr(r, "methods", None) or ([] if isinstance(r, Mount) else ["WEBSOCKET"]))
    out.append([r.path + ("/{rest:path}" if isinstance(r, Mount) else ""), methods or ["GET", "POST"]])
print(json.dumps(out))
"""


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("RAG_AGENT_VISITOR_SECRET", "RAG_AGENT_API_KEYS", "RAG_AGENT_ALLOWED_ORIGINS", "RAG_AGENT_ADMINS",
                 "RAG_AGENT_RATE_LIMIT_VISITOR", "RAG_AGENT_RATE_LIMIT_IP", "RAG_AGENT_MAX_BODY_BYTES",
                 "RAG_AGENT_TRUST_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def server_routes() -> list[tuple[str, str]]:
    """Return every (method, route) the LangGraph server mounts, plus the widget app's routes."""
    env = {**os.environ, **DEV_ENV}
    dumped = subprocess.run([sys.executable, "-c", _DUMP], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120, check=True)
    table = json.loads(dumped.stdout.strip().splitlines()[-1])
    pairs = {(m, path) for path, methods in table for m in methods if m != "HEAD"}
    pairs |= {(m, r.path) for r in web_app.routes if isinstance(r, Route) for m in (r.methods or []) if m != "HEAD"}
    return sorted(pairs)


def concrete(route: str) -> str:
    """Fill a route template with sample values."""
    return re.sub(r"\{(\w+)(:path)?\}", lambda m: "a/b" if m.group(2) else "sample-id", route)


async def reached(request: Request) -> JSONResponse:
    return JSONResponse({"reached": True})


def gated(monkeypatch: pytest.MonkeyPatch, **env: str) -> TestClient:
    """The gate in front of an app that answers 200 on every path: a 200 means the request got through."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    inner = [Route("/{path:path}", reached, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])]
    app = Starlette(routes=inner, middleware=[Middleware(Guard), Middleware(SurfaceGate)])
    return TestClient(app, base_url="http://agent.test")


def as_visitor() -> dict[str, str]:
    return {"Authorization": f"Bearer {visitors.issue()[0]}"}


# --- the allow-list against the real route table ------------------------------------------------------


def test_every_route_a_visitor_can_reach_is_on_the_reviewed_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    routes = server_routes()
    assert ("POST", "/threads/{thread_id}/state") in routes and ("POST", "/assistants/search") in routes
    assert set(policy.VISITOR_ROUTES) == REVIEWED, "the visitor allow-list changed: review it and update REVIEWED"
    through = set()
    with gated(monkeypatch, RAG_AGENT_API_KEYS="alice:alice-token", RAG_AGENT_RATE_LIMIT_IP="off") as client:
        for method, route in routes:
            if method == "WEBSOCKET":
                continue
            answer = client.request(method, concrete(route), headers=as_visitor(), json=None)
            if answer.status_code == 200:
                through.add((method, route))
            else:
                assert answer.status_code == 403 and "visitors may not use" in answer.json()["detail"], (method, route)
    assert through <= REVIEWED, f"reachable by a visitor but not reviewed: {sorted(through - REVIEWED)}"
    assert ("POST", "/threads/{thread_id}/runs/stream") in through


def test_websockets_are_closed_for_visitors_and_other_users(monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.websockets import WebSocketDisconnect

    with gated(monkeypatch, RAG_AGENT_API_KEYS="bob:bob-token") as client:
        for headers in (as_visitor(), {"Authorization": "Bearer bob-token"}):
            with pytest.raises(WebSocketDisconnect), client.websocket_connect("/threads/t/stream/events",
                                                                              headers=headers):
                pass


@pytest.mark.parametrize(("body", "refused"), [
    ({"stream_mode": ["events"]}, "stream_mode events"),
    ({"stream_mode": "debug"}, "stream_mode debug"),
    ({"interrupt_before": ["generate_grounded"]}, "interrupt_before"),
    ({"interrupt_after": ["score_gate"]}, "interrupt_after"),
    ({"webhook": "https://example.com/hook"}, "webhook"),
    ({"config": {"configurable": {"chat_model": "x"}}}, "config"),
    ({"command": {"resume": "x"}}, "command"),
    ({"assistant_id": "indexer"}, "may only run agent"),
    ({"input": None}, "resuming an interrupted run"),
], ids=lambda v: str(v)[:30])
def test_a_visitors_run_may_carry_only_the_widgets_fields(monkeypatch: pytest.MonkeyPatch, body: dict[str, Any],
                                                         refused: str) -> None:
    question = {"assistant_id": "agent", "stream_mode": ["custom", "values"],
                "input": {"messages": [{"role": "user", "content": "hi"}], "context": "", "page_url": ALLOWED}}
    with gated(monkeypatch) as client:
        assert client.post("/threads/t/runs/stream", headers=as_visitor(), json=question).status_code == 200
        answer = client.post("/threads/t/runs/stream", headers=as_visitor(), json=question | body)
        assert answer.status_code == 403 and refused in answer.json()["detail"]


def test_visitors_cannot_write_state_or_list_assistants_and_get_a_json_rpc_error_on_mcp(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with gated(monkeypatch) as client:
        for method, path in (("POST", "/threads/t/state"), ("PATCH", "/threads/t/state"), ("POST", "/threads/t/copy"),
                             ("POST", "/assistants/search"), ("POST", "/internal/truncate"), ("GET", "/metrics")):
            answer = client.request(method, path, headers=as_visitor(), json={"values": {}})
            assert answer.status_code == 403 and f"visitors may not use {method} {path}" in answer.json()["detail"]
        mcp = client.post("/mcp", headers=as_visitor(), json={"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
        assert mcp.status_code == 403 and mcp.json()["error"]["message"].startswith("visitors may not use POST /mcp")


def test_named_users_who_are_not_admins_get_no_prompts_or_raw_output(monkeypatch: pytest.MonkeyPatch) -> None:
    bob, root = {"Authorization": "Bearer bob-token"}, {"Authorization": "Bearer root-token"}
    with gated(monkeypatch, RAG_AGENT_API_KEYS="bob:bob-token,root:root-token", RAG_AGENT_ADMINS="root") as client:
        for path in ("/runs/stream", "/threads/t/runs/stream", "/threads/t/runs/wait", "/runs"):
            answer = client.post(path, headers=bob, json={"assistant_id": "agent", "stream_mode": ["values", "events"]})
            assert answer.status_code == 403 and "stream_mode events is for admins only" in answer.json()["detail"]
            assert client.post(path, headers=root, json={"stream_mode": ["events"]}).status_code == 200
        batch = [{"assistant_id": "agent"}, {"assistant_id": "agent", "stream_mode": "debug"}]
        assert client.post("/runs/batch", headers=bob, json=batch).status_code == 403
        joined = client.get("/threads/t/runs/r/stream", headers=bob, params={"stream_mode": "events"})
        assert joined.status_code == 403
        for path in ("/internal/truncate", "/threads/t/commands", "/threads/t/stream/events"):
            assert client.post(path, headers=bob, json={}).status_code == 403
            assert client.post(path, headers=root, json={}).status_code == 200
        # What they own stays theirs to use: state writes, interrupts and their own assistants.
        assert client.post("/threads/t/state", headers=bob, json={"values": {}}).status_code == 200
        assert client.post("/assistants/search", headers=bob, json={}).status_code == 200


# --- webhooks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://10.0.0.5/hook", "http://192.168.1.1/hook", "http://172.17.0.1/hook",
                                 "http://100.64.0.1/hook", "http://[fd00::1]/hook", "http://127.0.0.1:8080/x",
                                 "http://169.254.169.254/latest/meta-data", "http://[::ffff:10.0.0.5]/hook",
                                 "http://localhost/hook", "http://0.0.0.0/hook", "file:///etc/passwd", "/threads"])
def test_webhooks_to_private_networks_are_refused_for_every_user(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    root = {"Authorization": "Bearer root-token"}
    with gated(monkeypatch, RAG_AGENT_API_KEYS="root:root-token", RAG_AGENT_ADMINS="root") as client:
        for path in ("/threads/t/runs", "/runs/wait", "/runs/crons"):
            answer = client.post(path, headers=root, json={"assistant_id": "agent", "webhook": url})
            assert answer.status_code == 403 and "webhook" in answer.json()["detail"], (path, url)


def test_webhook_addresses_are_judged_by_every_address_the_host_resolves_to() -> None:
    url = "https://hooks.example.com/x"
    assert policy.webhook_host_problem(url, ["93.184.215.14", "2606:2800:21f:cb07::1"]) is None
    assert "10.1.2.3" in (policy.webhook_host_problem(url, ["93.184.215.14", "10.1.2.3"]) or "")
    assert "does not resolve" in (policy.webhook_host_problem("https://nowhere.invalid/x", []) or "")


# --- the per-IP limit, MCP over the limit, CORS, nested JSON ------------------------------------------


def test_a_fresh_x_forwarded_for_per_request_does_not_reset_the_ip_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    with gated(monkeypatch, RAG_AGENT_RATE_LIMIT_IP="3/600") as client:
        # As uvicorn hands it on from a proxy it trusts (127.0.0.1 by default): the peer already replaced by the header.
        statuses = []
        for n in range(5):
            forged = f"203.0.113.{n}"
            with TestClient(client.app, base_url="http://agent.test", client=(forged, 0)) as spoofed:
                statuses.append(spoofed.post("/widget/token", headers={"X-Forwarded-For": forged}).status_code)
        assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429]


def test_with_trust_proxy_the_address_the_proxy_saw_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    with gated(monkeypatch, RAG_AGENT_RATE_LIMIT_IP="1/600", RAG_AGENT_TRUST_PROXY="1") as client:
        first = client.post("/widget/token", headers={"X-Forwarded-For": "1.1.1.1, 198.51.100.7"})
        spoofed = client.post("/widget/token", headers={"X-Forwarded-For": "2.2.2.2, 198.51.100.7"})
        other = client.post("/widget/token", headers={"X-Forwarded-For": "198.51.100.8"})
        assert (first.status_code, spoofed.status_code, other.status_code) == (200, 429, 200)


def test_mcp_tool_calls_over_the_limit_get_429_with_a_json_rpc_error(monkeypatch: pytest.MonkeyPatch) -> None:
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "agent", "arguments": {}}}
    with gated(monkeypatch, RAG_AGENT_RATE_LIMIT_IP="1/600") as client:
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert [client.post("/mcp", json=listing).status_code for _ in range(3)] == [200, 200, 200]  # not runs
        assert client.post("/mcp", json=call).status_code == 200
        over = client.post("/mcp", json=call)
        assert over.status_code == 429 and int(over.headers["retry-after"]) > 0
        assert over.json()["id"] == 7 and "Please wait" in over.json()["error"]["message"]


def test_cors_is_granted_only_to_listed_origins_never_to_whatever_host_was_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_ALLOWED_ORIGINS", ALLOWED)
    app = Starlette(routes=web_app.routes, middleware=[Middleware(OriginGate), Middleware(Guard)],
                    lifespan=web_app.lifespan)
    with TestClient(app, base_url="http://rebound.attacker.example:2024") as client:
        for origin in ("http://rebound.attacker.example:2024", "https://rebound.attacker.example:2024",
                       "http://rebound.attacker.example"):
            refused = client.post("/widget/token", headers={"Origin": origin})
            assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers, origin
        assert client.post("/widget/token", headers={"Origin": ALLOWED}).status_code == 200
    with TestClient(app, base_url="http://127.0.0.1:2024") as local:  # the demo page on the server's own address
        assert local.post("/widget/token", headers={"Origin": "http://127.0.0.1:2024"}).status_code == 200
        assert local.post("/widget/token", headers={"Origin": "https://127.0.0.1:2024"}).status_code == 403


def test_deeply_nested_json_is_a_clear_400_not_a_500(monkeypatch: pytest.MonkeyPatch) -> None:
    nested = "[" * 30_000 + "]" * 30_000  # 60 KB, under the body limit
    app = Starlette(routes=web_app.routes, middleware=[Middleware(Guard), Middleware(SurfaceGate)])
    with TestClient(app, base_url="http://agent.test", raise_server_exceptions=True) as client:
        feedback = client.post("/widget/feedback", headers=as_visitor(), content=nested)
        assert feedback.status_code == 400 and "send JSON" in feedback.json()["detail"]
        assert client.post("/widget/token", content=nested).status_code == 200
        run = client.post("/threads/t/runs/stream", headers=as_visitor(), content=nested)
        assert run.status_code == 400 and "nested too deeply" in run.json()["detail"]


# --- HTML outputs trust no URL a caller sent ----------------------------------------------------------


def test_the_coverage_report_never_links_a_forged_script_url() -> None:
    from rag_agent.reporting.report_html import _gaps

    forged = ["javascript:alert(document.cookie)", " JaVa\tScRiPt:alert(1)", "data:text/html,<script>x</script>",
              "vbscript:msgbox(1)"]
    group = {"count": 2, "examples": ["q1", "q2"], "topic": "t",
             "nearest_sections": [{"title": f"Forged {n}", "source_url": url} for n, url in enumerate(forged)]
             + [{"title": "Real", "source_url": 'https://docs.example.com/a"onmouseover="x'}]}
    page = _gaps([group])
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs == ["https://docs.example.com/a&quot;onmouseover=&quot;x"]
    assert all(f"Forged {n}" in page for n in range(len(forged))) and "link not shown" in page
