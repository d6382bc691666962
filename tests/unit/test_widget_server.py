"""The widget's server side without a server: visitor tokens, visitor policy, limits, CORS and the demo pages."""

from __future__ import annotations

import asyncio
import gzip
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from logic.chunking import chunk_markdown
from rag_agent.server import auth, visitors
from rag_agent.server import visitor_policy as policy
from rag_agent.server.web import app as web_app
from rag_agent.server.web import demo, limits
from rag_agent.server.web.middleware import Guard, OriginGate
from tests.tiny_corpus import CORPUS

STATIC = Path(web_app.__file__).parent / "static"
ALLOWED = "https://docs.example.com"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("RAG_AGENT_VISITOR_SECRET", "RAG_AGENT_API_KEYS", "RAG_AGENT_ALLOWED_ORIGINS",
                 "RAG_AGENT_RATE_LIMIT_VISITOR", "RAG_AGENT_RATE_LIMIT_IP", "RAG_AGENT_MAX_BODY_BYTES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


# --- visitor tokens ----------------------------------------------------------------------------------


def test_a_visitor_token_verifies_and_the_secret_is_kept_private_in_the_data_dir(data_dir: Path) -> None:
    token, visitor = visitors.issue()
    assert visitors.verify(token) == visitor and visitor.identity == f"visitor:{visitor.visitor_id}"
    secret_file = data_dir / visitors.SECRET_FILE
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    # A restart reads the same secret: tokens already handed out stay valid.
    visitors._secret_for.cache_clear()
    assert visitors.verify(token) == visitor
    renewed, same = visitors.issue(visitor_id=visitor.visitor_id)
    assert same.visitor_id == visitor.visitor_id and visitors.verify(renewed) == same


def test_forged_expired_or_foreign_tokens_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    token, visitor = visitors.issue()
    prefix, vid, expires, signature = token.split(".")
    assert visitors.verify(f"{prefix}.someone-else.{expires}.{signature}") is None
    assert visitors.verify(f"{prefix}.{vid}.{int(expires) + 10**6}.{signature}") is None
    assert visitors.verify(token, now=visitor.expires + 1) is None
    assert visitors.verify("rav1.garbage") is None
    monkeypatch.setenv("RAG_AGENT_VISITOR_SECRET", "x" * 40)  # another deployment's secret
    assert visitors.verify(token) is None
    monkeypatch.setenv("RAG_AGENT_VISITOR_SECRET", "short")
    with pytest.raises(visitors.VisitorSecretError, match="RAG_AGENT_VISITOR_SECRET must be at least 32"):
        visitors.issue()


def test_auth_names_visitors_with_or_without_named_keys() -> None:
    token, visitor = visitors.issue()
    assert auth.identify(f"Bearer {token}", {}) == visitor.identity
    assert auth.identify(f"Bearer {token}", {"t1": "alice"}) == visitor.identity
    assert auth.identify("Bearer t1", {"t1": "alice"}) == "alice"  # named users keep working
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        auth.identify(f"Bearer {token[:-2]}xx", {})
    assert refused.value.status_code == 401 and "visitor token" in str(refused.value.detail)
    with pytest.raises(auth.ApiKeyError, match="reserved for visitor tokens"):
        auth.parse_api_keys("alice:rav1.abc")


def _visitor_ctx(resource: str, action: str) -> Any:
    class User:
        identity, permissions, is_authenticated, display_name = "visitor:abc", [], True, "visitor"

        def __getitem__(self, key: str) -> Any:
            return getattr(self, key)

    return Auth.types.AuthContext(resource=resource, action=action, user=User(), permissions=[])  # type: ignore


def test_visitors_use_their_own_threads_with_the_deployments_settings() -> None:
    run = {"metadata": {}, "kwargs": {"input": {"messages": [{"role": "user", "content": "hi"}],
                                                "context": "", "page_url": "https://docs.example.com/a"},
                                      "config": {"configurable": {"thread_id": "t"}}, "stream_mode": ["values"]}}
    assert asyncio.run(auth.owner_only(ctx=_visitor_ctx("threads", "create_run"), value=run)) == \
        {"owner": "visitor:abc"}
    refusals = {
        "settings": ({"context": {"data_dir": "/etc"}}, "cannot change the agent's settings"),
        "config": ({"config": {"configurable": {"chat_model": "x"}}}, "config.configurable chat_model"),
        "field": ({"input": {"messages": [], "turns": 0}}, "unknown input field"),
        "history": ({"input": {"messages": [{"role": "user", "content": "a"}] * 2}}, "exactly one new message"),
        "command": ({"command": {"goto": "generate_grounded"}}, "commands"),
    }
    for kwargs, message in refusals.values():
        with pytest.raises(Auth.exceptions.HTTPException, match=message):
            policy.check_run(kwargs)
    for resource in ("assistants", "crons"):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            asyncio.run(auth.owner_only(ctx=_visitor_ctx(resource, "create"), value={"metadata": {}}))
        assert refused.value.status_code == 403


# --- limits ------------------------------------------------------------------------------------------


def test_rates_parse_and_name_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert limits.ip_rate() == limits.Rate(30, 60.0)
    monkeypatch.setenv("RAG_AGENT_RATE_LIMIT_IP", "off")
    assert limits.ip_rate() is None
    for bad in ("30", "x/60", "0/60", "5/-1"):
        monkeypatch.setenv("RAG_AGENT_RATE_LIMIT_IP", bad)
        with pytest.raises(limits.LimitSettingError, match="RAG_AGENT_RATE_LIMIT_IP must look like 10/60"):
            limits.ip_rate()


def test_sliding_window_allows_the_rate_then_says_how_long_to_wait() -> None:
    window, rate = limits.SlidingWindow(), limits.Rate(2, 10)
    assert [window.hit("v", rate, now=t) for t in (0, 1)] == [0, 0]
    assert window.hit("v", rate, now=2) == pytest.approx(8)
    assert window.hit("other", rate, now=2) == 0  # each key has its own budget
    assert window.hit("v", rate, now=10.5) == 0  # the first request left the window
    assert "Please wait 8 seconds" in limits.slow_down(7.6)


def _client(monkeypatch: pytest.MonkeyPatch, **env: str) -> TestClient:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = Starlette(routes=web_app.routes, middleware=[Middleware(OriginGate), Middleware(Guard)],
                    lifespan=web_app.lifespan)
    return TestClient(app, base_url="http://agent.test")


def test_cors_answers_only_the_allowed_origins(monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(monkeypatch, RAG_AGENT_ALLOWED_ORIGINS=ALLOWED) as client:
        preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
        ok = client.options("/threads", headers={"Origin": ALLOWED, **preflight})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == ALLOWED
        assert "authorization" in ok.headers["access-control-allow-headers"]
        evil = client.options("/threads", headers={"Origin": "https://evil.example", **preflight})
        assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
        assert "RAG_AGENT_ALLOWED_ORIGINS" in evil.json()["detail"]
        issued = client.post("/widget/token", headers={"Origin": ALLOWED})
        assert issued.status_code == 200 and issued.headers["access-control-allow-origin"] == ALLOWED
        # The server's own name in Host is no proof of the same origin: it may be a DNS-rebound attacker's page.
        assert client.post("/widget/token", headers={"Origin": "http://agent.test"}).status_code == 403
        assert client.get("/widget/rag-agent.js").status_code == 200  # no Origin: a plain script tag


def test_limits_reply_429_with_a_friendly_message_and_413_for_huge_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(monkeypatch, RAG_AGENT_ALLOWED_ORIGINS=ALLOWED, RAG_AGENT_RATE_LIMIT_IP="2/60",
                 RAG_AGENT_MAX_BODY_BYTES="2048") as client:
        assert [client.post("/widget/token").status_code for _ in range(2)] == [200, 200]
        slow = client.post("/widget/token", headers={"Origin": ALLOWED})
        assert slow.status_code == 429 and int(slow.headers["retry-after"]) > 0
        assert slow.json()["detail"].startswith("You're asking faster than I can answer. Please wait")
        assert slow.headers["access-control-allow-origin"] == ALLOWED  # the widget can read and show it
        huge = client.post("/widget/feedback", content=b"x" * 5000)
        assert huge.status_code == 413 and "too long" in huge.json()["detail"]


def test_visitor_rate_is_per_visitor(monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(monkeypatch, RAG_AGENT_RATE_LIMIT_VISITOR="1/60", RAG_AGENT_MAX_BODY_BYTES="2048") as client:
        first, second = visitors.issue()[0], visitors.issue()[0]
        # The run routes are not mounted here, so an allowed request falls through to 404, a refused one is 429.
        assert client.post("/threads/t/runs/stream", headers={"Authorization": f"Bearer {first}"}).status_code == 404
        assert client.post("/threads/t/runs/stream", headers={"Authorization": f"Bearer {first}"}).status_code == 429
        assert client.post("/threads/t/runs/wait", headers={"Authorization": f"Bearer {second}"}).status_code == 404


# --- demo pages and the widget files -----------------------------------------------------------------


def test_demo_headings_carry_the_anchors_citations_link_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text + "\nSee [baking](baking.md#oven).\n", encoding="utf-8")
    monkeypatch.setenv("RAG_AGENT_DEMO_DOCS", str(docs))
    page = demo.render("/demo/isaac-sim", "/widget/rag-agent.js")
    assert page is not None
    anchors = {c.anchor for c in chunk_markdown(CORPUS["isaac-sim.md"], "isaac-sim.md")}
    assert anchors == set(re.findall(r'<h[1-6] id="([^"]+)"', page)) == {"isaac-sim", "synthetic-data"}
    assert 'href="/demo/baking#oven"' in page
    assert '<script src="/widget/rag-agent.js"' in page
    assert "Contents" in (demo.render("/demo/", "/w.js") or "")  # no index page: a list of pages
    assert demo.render("/demo/../../etc/passwd", "/w.js") is None


def test_widget_is_small_and_loads_nothing_from_other_hosts() -> None:
    js, css = (STATIC / "rag-agent.js").read_bytes(), (STATIC / "rag-agent.css").read_bytes()
    # About 50 KB of it is markdown-it and DOMPurify (safe Markdown answers, issue 25); the widget itself is ~10 KB.
    assert len(gzip.compress(js)) + len(gzip.compress(css)) <= 72 * 1024
    code = re.sub(rb"/\*.*?\*/", b"", js, flags=re.S)  # the header comment shows an example URL
    # DOMPurify names the XML namespaces it knows (identifiers, never fetched).
    code = re.sub(rb"http://www\.w3\.org/(1998/Math/MathML|2000/svg|1999/xhtml)\b", b"", code)
    assert not re.search(rb"https?://", code + css), "no CDN or third-party URL at run time"
