"""`rag-agent report` over known records: rates, trend, latency, cited sections, feedback, gaps; text, JSON, HTML."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from rag_agent import records
from rag_agent.cli import commands as cli
from rag_agent.reporting.report import build, format_text
from rag_agent.reporting.report_html import render
from tools.embeddings import HashEmbeddings
from tools.records import RecordStore

NOW = time.time()
NEAR = {"title": "Isaac Sim › Setup", "source_url": "isaac.md#setup", "source": "isaac.md", "score": 0.4}


def record(turn: str, status: str, question: str, hours_ago: float, **extra: Any) -> dict[str, Any]:
    return {"turn_id": turn, "thread_id": f"t-{turn}", "started_at": NOW - hours_ago * 3600 - 1,
            "finished_at": NOW - hours_ago * 3600, "question": question, "standalone_query": question,
            "status": status, "flagged": 0, "model": "m", "embedder": "hash/256", "tokens": 10,
            "latency_ms": 100.0, "index_version": "v1", "retrieved": 1, "sources": [NEAR]} | extra


@pytest.fixture
def store(tmp_path: Path) -> RecordStore:
    store = RecordStore(str(tmp_path / "data" / "checkpoints.sqlite"))
    rows = [record(f"a{i}", "grounded", "What is Isaac Sim?", 30, latency_ms=100.0 + i) for i in range(6)]
    rows += [record("f1", "grounded", "How do I tune Isaac Sim physics?", 5, flagged=1, latency_ms=900.0)]
    rows += [record(f"p{i}", "not_found", "How much does a Unity Pro license cost?", 2,
                    not_found_reason="below_threshold") for i in range(3)]
    rows += [record("e1", "error", "", 1, error_code="INVALID_INPUT", retrieved=0, sources=[]),
             record("c1", "chitchat", "hello", 1, retrieved=0, sources=[]),
             record("old", "grounded", "ancient question", 24 * 30)]
    for row in rows:
        store.record_turn(row)
    store.record_feedback("p0", -1, "We need prices")
    store.record_feedback("a0", 1)
    return store


def test_report_counts_rates_latency_and_feedback(store: RecordStore) -> None:
    report = build(store, 2 * 86400, HashEmbeddings(256).embed_documents, now=NOW)
    assert report["turns"] == 12  # the 30-day-old turn is outside the window
    assert report["counts"] == {"answered": 6, "flagged": 1, "not_found": 3, "error": 1, "other": 1}
    assert report["rates"]["not_found"] == 0.25
    assert sum(sum(b[o] for o in report["counts"]) for b in report["trend"]) == 12
    assert len(report["trend"]) == 49  # hourly buckets over two days
    # 6 x 100, 101..105, 900 ms: the median between 100 and 101, p95 interpolated between 105 and 900
    assert report["latency"] == {"p50_ms": 100.5, "p95_ms": 462.8}
    assert report["top_cited_sections"] == [{"title": NEAR["title"], "source_url": NEAR["source_url"], "answers": 7}]
    assert report["feedback"]["up"] == 1 and report["feedback"]["down"] == 1
    (negative,) = report["feedback"]["negative"]
    assert (negative["question"], negative["comment"]) == ("How much does a Unity Pro license cost?", "We need prices")


def test_gaps_group_unanswered_questions_and_leave_unsure_answers_to_their_own_section(store: RecordStore) -> None:
    report = build(store, 2 * 86400, HashEmbeddings(256).embed_documents, now=NOW)
    gaps = report["coverage_gaps"]
    assert [g["count"] for g in gaps] == [3]  # the three refusals; the flagged answer is no page to write…
    flagged = [w for w in report["wrong_answer_candidates"] if w["question"] == "How do I tune Isaac Sim physics?"]
    assert flagged and "flagged" in flagged[0]["reasons"]  # …but a possibly wrong answer
    assert gaps[0]["examples"] == ["How much does a Unity Pro license cost?"]
    assert "unity" in gaps[0]["topic"] or "license" in gaps[0]["topic"]
    assert gaps[0]["nearest_sections"][0]["title"] == NEAR["title"] and gaps[0]["nearest_sections"][0]["turns"] == 3
    text = format_text(build(store, 2 * 86400, HashEmbeddings(256).embed_documents, now=NOW))
    assert "not-found 3 (25%)" in text and "e.g. How much does a Unity Pro license cost?" in text


def test_html_is_self_contained_and_escapes_questions(store: RecordStore) -> None:
    store.record_turn(record("x1", "not_found", "<script>alert(1)</script> price?", 1))
    page = render(build(store, 2 * 86400, HashEmbeddings(256).embed_documents, now=NOW))
    assert page.count("<svg") >= 4 and "<script>" not in page and "&lt;script&gt;" in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from anywhere


def test_cli_report(store: RecordStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path / "data")
    html = tmp_path / "r.html"
    assert cli.main(["--data-dir", data, "report", "--since", "2d", "--json", "--html", str(html)]) == 0
    assert json.loads(capsys.readouterr().out)["turns"] == 12
    assert "<svg" in html.read_text()
    assert cli.main(["--data-dir", data, "report", "--since", "soon"]) == 2
    assert "--since: invalid duration 'soon'" in capsys.readouterr().err
    records.close_store(str(tmp_path / "data" / "checkpoints.sqlite"))


def test_a_report_opened_from_disk_links_sections_on_the_docs_site(store: RecordStore, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data, html = str(tmp_path / "data"), tmp_path / "r.html"
    args = ["--data-dir", data, "report", "--since", "2d", "--html", str(html)]
    assert cli.main([*args, "--site-url", "https://docs.example.com/"]) == 0
    page = html.read_text()
    # The index links "isaac.md#setup" relative to the site: a <base> resolves it from a file:// page too.
    assert '<base href="https://docs.example.com/">' in page and 'href="isaac.md#setup"' in page
    assert cli.main([*args, "--site-url", "javascript:alert(1)"]) == 2
    assert "--site-url must be an http(s) address" in capsys.readouterr().err
    records.close_store(str(tmp_path / "data" / "checkpoints.sqlite"))
