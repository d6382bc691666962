"""The held-out question sets stay consistent with the docs they were written for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# benchmarks/sites.py reads them from here too; it is not imported, since it clears API keys from the environment.
HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout"
SITES = sorted(p for p in HELDOUT.iterdir() if (p / "questions.jsonl").is_file())


def _rows(path: Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("site", SITES, ids=[p.name for p in SITES])
def test_every_gold_page_exists_and_holds_its_keywords(site: Path) -> None:
    corpus = Path((site / "corpus.txt").read_text().strip())
    if not corpus.is_dir():
        pytest.skip(f"held-out corpus of {site.name} not installed here: {corpus}")
    cases: list[tuple[str, list[str], list[str]]] = []
    questions = _rows(site / "questions.jsonl")
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        if q["expected"] == "GROUNDED":
            cases.append((q["id"], q["gold"], q["answer_keywords"]))
        else:
            assert q["kind"] in ("near_miss", "far_off") and (q["kind"] == "far_off" or q.get("why_absent"))
    for conv in _rows(site / "conversations.jsonl"):
        for n, turn in enumerate(conv["turns"]):
            if turn["gold"] is not None:
                cases.append((f"{conv['id']}#{n + 1}", turn["gold"], turn["answer_keywords"]))
    for sel in _rows(site / "selection.jsonl"):
        cases.append((sel["id"], [sel["selection_file"]], sel["answer_keywords"]))
    for case, gold, keywords in cases:
        texts = [(corpus / g).read_text(encoding="utf-8").lower() for g in gold]
        for keyword in keywords:
            assert any(keyword.lower() in t for t in texts), (case, keyword)
