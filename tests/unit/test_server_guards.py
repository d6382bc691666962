"""Server guards without a server: cron schedules, the API docs/metrics gate, URL passwords in logs."""

from __future__ import annotations

import logging

import pytest

from rag_agent.logs import install_redaction, mask_url
from rag_agent.server.auth import MIN_CRON_INTERVAL, shortest_gap
from rag_agent.server.meta_guard import PUBLIC_ENV, allowed


@pytest.mark.parametrize(("schedule", "ok"), [("* * * * *", False), ("*/5 * * * *", False), ("0,1 * * * *", False),
                                              ("* * 1 * *", False), ("0 * * * *", True), ("0 9 * * 1-5", True)])
def test_cron_schedules_more_often_than_hourly_are_too_frequent(schedule: str, ok: bool) -> None:
    gap = shortest_gap(schedule)
    assert gap is not None and (gap >= MIN_CRON_INTERVAL) is ok


def test_an_invalid_schedule_is_left_to_the_server_to_refuse() -> None:
    assert shortest_gap("every minute please") is None


def _request(path: str, token: str = "") -> dict[str, object]:
    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return {"type": "http", "path": path, "headers": headers}


def test_docs_and_metrics_need_a_known_token_when_keys_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_API_KEYS", "alice:tok-a")
    monkeypatch.delenv(PUBLIC_ENV, raising=False)
    assert not allowed(_request("/docs")) and not allowed(_request("/metrics", "nope"))
    assert allowed(_request("/openapi.json", "tok-a")) and allowed(_request("/ok")) and allowed(_request("/threads"))
    monkeypatch.setenv(PUBLIC_ENV, "true")  # the documented way to keep them open
    assert allowed(_request("/docs"))
    monkeypatch.delenv("RAG_AGENT_API_KEYS")  # no auth at all: a local dev server
    monkeypatch.delenv(PUBLIC_ENV)
    assert allowed(_request("/metrics"))


def test_url_passwords_are_masked_in_every_log_record(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://bob:hunter2%21x@llm.internal/v1")
    install_redaction()
    with caplog.at_level(logging.INFO, logger="httpx"):
        logging.getLogger("httpx").info('HTTP Request: %s %s "%s"', "POST", "https://bob:hunter2%21x@llm.internal/v1",
                                        "200 OK")
        logging.getLogger("httpx").info("decoded: hunter2!x")
    assert "hunter2" not in caplog.text and "bob:***@llm.internal" in caplog.text
    assert mask_url("postgresql://u:p4ss@db/x") == "postgresql://u:***@db/x" and mask_url("https://h/a@b") == "https://h/a@b"
