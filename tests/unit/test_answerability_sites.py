"""benchmarks/answerability.py --sites: labels of each site's questions and the left-out-site threshold rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.answerability import answering_threshold, balanced_threshold, heldout_rows, per_kind, site_rows

NAMES = ("cosine",)


def _row(site: str, kind: str, cosine: float) -> dict[str, Any]:
    return {"set": site, "kind": kind, "label": int(kind == "in_scope"), "features": {"cosine": cosine}}


def test_site_questions_are_labelled_in_scope_near_miss_or_far_off(tmp_path: Path) -> None:
    folder = tmp_path / "sites" / "docs"
    folder.mkdir(parents=True)
    lines = [{"question": "How do I deploy?", "expected": "GROUNDED", "kind": "howto"},
             {"question": "Who founded it?", "expected": "NOT_FOUND", "kind": "near_miss"},
             {"question": "Best pizza in Rome?", "expected": "NOT_FOUND", "kind": "far_off"},
             {"question": "What does this mean?", "expected": "GROUNDED", "selection_file": "a.md"}]
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in lines) + "\n")
    rows = site_rows(tmp_path, "docs")
    assert [(r["kind"], r["label"]) for r in rows] == [("in_scope", 1), ("near_miss", 0), ("far_off", 0)]


def test_held_out_questions_are_labelled_like_the_shared_sites(tmp_path: Path) -> None:
    lines = [{"question": "How do I retry?", "expected": "GROUNDED", "kind": "howto"},
             {"question": "Who maintains it?", "expected": "NOT_FOUND", "kind": "near_miss"},
             {"question": "Capital of Peru?", "expected": "NOT_FOUND", "kind": "far_off"},
             {"question": "Which of these?", "expected": "GROUNDED", "selection_file": "a.md"}]
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in lines) + "\n")
    rows = heldout_rows(tmp_path)
    assert [(r["set"], r["kind"], r["label"]) for r in rows] == [
        (tmp_path.name, "in_scope", 1), (tmp_path.name, "near_miss", 0), (tmp_path.name, "far_off", 0)]


def test_per_kind_counts_answered_in_scope_and_refused_others() -> None:
    rows = [_row("a", "in_scope", 3.0), _row("a", "in_scope", -3.0), _row("a", "near_miss", -3.0),
            _row("a", "far_off", 3.0)]
    assert per_kind(rows, [0.0, 1.0], 0.5, NAMES) == {
        "in_scope": "1/2 = 0.50", "near_miss": "1/1 = 1.00", "far_off": "0/1 = 0.00"}


def test_answering_threshold_keeps_the_floor_on_every_training_site() -> None:
    # Site b's in-scope questions score lower: the threshold must answer them, though site a would allow more.
    rows = [_row("a", "in_scope", 2.0), _row("a", "near_miss", 0.0),
            _row("b", "in_scope", 0.5), _row("b", "near_miss", -2.0)]
    threshold = answering_threshold(rows, [0.0, 1.0], NAMES, 1.0)
    assert all(v.endswith("1.00") for v in (per_kind([r for r in rows if r["set"] == s], [0.0, 1.0], threshold,
                                                      NAMES)["in_scope"] for s in "ab"))
    # The highest such threshold: one step up, site b's in-scope question is refused.
    assert per_kind(rows[2:], [0.0, 1.0], threshold + 0.01, NAMES)["in_scope"] == "0/1 = 0.00"


def test_balanced_threshold_finds_the_narrow_gap_between_in_scope_and_near_misses() -> None:
    # Site a's near misses score 0.55, just under site b's in-scope question (0.57).
    rows = [*[_row("a", "near_miss", 0.2) for _ in range(8)], _row("a", "in_scope", 2.0),
            _row("b", "in_scope", 0.3), _row("b", "near_miss", -2.0)]
    threshold = balanced_threshold(rows, [0.0, 1.0], NAMES)
    assert per_kind(rows, [0.0, 1.0], threshold, NAMES) == {"in_scope": "2/2 = 1.00", "near_miss": "9/9 = 1.00"}
