"""`rag-agent report` on the default install (no scikit-learn): far-off questions apart, a wrong-answer section."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rag_agent.reporting.report import build, format_text
from rag_agent.reporting.report_html import render
from tests.unit.test_report import NOW, record
from tools.embeddings import HashEmbeddings
from tools.records import RecordStore

VOCABULARY = {"isaac", "sim", "unity", "license", "price", "physic", "tune", "install"}


def test_the_report_needs_no_scikit_learn_and_separates_far_off_and_possibly_wrong_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)  # as on `make demo`'s install: importing it fails
    store = RecordStore(str(tmp_path / "records.sqlite"))
    rows = [record("g1", "grounded", "How do I install Isaac Sim?", 3, confidence=0.9),
            record("g2", "grounded", "How do I tune Isaac Sim physics?", 3, confidence=0.3),
            record("g3", "grounded", "What is Isaac Sim?", 3, confidence=0.9),
            record("g4", "grounded", "What does a Unity license cost?", 3, confidence=0.8, flagged=1),
            record("r1", "grounded", "Install Isaac Sim on macOS", 2, confidence=0.9, thread_id="t-mac"),
            record("r2", "grounded", "Install Isaac Sim on macOS please", 1.9, confidence=0.9, thread_id="t-mac"),
            record("n1", "not_found", "How much does a Unity license cost?", 2, not_found_reason="below_threshold"),
            record("n2", "not_found", "How much does a Unity Pro license cost?", 2, not_found_reason="below_threshold"),
            record("w1", "not_found", "Will it rain in Paris tomorrow?", 2, not_found_reason="below_threshold"),
            record("w2", "not_found", "Best sourdough starter recipe", 2, not_found_reason="below_threshold")]
    for row in rows:
        store.record_turn(row)
    store.record_feedback("g3", -1, "wrong")
    report = build(store, 86400, HashEmbeddings(256).embed_documents, now=NOW, vocabulary=VOCABULARY)

    assert report["far_off"] == {"count": 2, "examples": ["Will it rain in Paris tomorrow?",
                                                          "Best sourdough starter recipe"]}
    gap_questions = {q for g in report["coverage_gaps"] for q in g["examples"]}
    assert "Will it rain in Paris tomorrow?" not in gap_questions
    assert {"How much does a Unity license cost?", "How much does a Unity Pro license cost?"} <= gap_questions
    prices = [g for g in report["coverage_gaps"] if "How much does a Unity license cost?" in g["examples"]]
    assert prices[0]["count"] >= 2  # one theme, one group
    wrong = {w["question"]: w["reasons"] for w in report["wrong_answer_candidates"]}
    assert wrong["What is Isaac Sim?"] == ["thumbs-down"]
    assert wrong["How do I tune Isaac Sim physics?"] == ["low confidence"]
    assert wrong["What does a Unity license cost?"] == ["flagged"]
    assert wrong["Install Isaac Sim on macOS"] == ["asked again: “Install Isaac Sim on macOS please”"]
    assert "How do I install Isaac Sim?" not in wrong

    text = format_text(report)
    assert "Far-off questions (not about these docs, not counted as gaps): 2" in text
    assert "Possibly wrong answers" in text and "asked again" in text
    html = render(report)
    assert "<h2>Possibly wrong answers</h2>" in html and "<h2>Far-off questions</h2>" in html
    assert "prefers-color-scheme:dark" in html
