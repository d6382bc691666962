"""The project's own tuning sets (benchmarks/tuning/) stay consistent with the shared corpora they were written for."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUNING = ROOT / "benchmarks" / "tuning"
SHARED = Path(os.environ.get("RAG_AGENT_SHARED", ROOT.parent / "shared")) / "eval"
SITES = sorted(p for p in TUNING.iterdir() if (p / "questions.jsonl").is_file())


def _rows(path: Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _corpus(site: Path) -> Path:
    """Return the shared corpus a tuning set was written for, skipping when it is not beside this checkout."""
    # The textbook sits beside the sites folder, not in it.
    corpus = SHARED / "textbook" / "corpus" if site.name == "textbook" else SHARED / "sites" / site.name / "corpus"
    if not corpus.is_dir():
        pytest.skip(f"the shared corpus of {site.name} is not beside this checkout: {corpus}")
    return corpus


def test_every_shared_tuning_site_has_a_users_set() -> None:
    assert [p.name for p in SITES] == ["mkdocs", "pydantic", "rust-book", "textbook"]


@pytest.mark.parametrize("site", SITES, ids=[p.name for p in SITES])
def test_gold_pages_hold_their_keywords_and_near_misses_say_why(site: Path) -> None:
    corpus = _corpus(site)
    questions = _rows(site / "questions.jsonl")
    assert len({q["id"] for q in questions}) == len(questions)
    kinds = [q["expected"] for q in questions]
    assert kinds.count("GROUNDED") == 20 and kinds.count("NOT_FOUND") == 15
    for q in questions:
        if q["expected"] == "NOT_FOUND":
            assert q["kind"] == "near_miss" and q["why_absent"], q["id"]
            continue
        texts = [(corpus / g).read_text(encoding="utf-8").lower() for g in q["gold"]]
        for keyword in q["answer_keywords"]:
            assert any(keyword.lower() in t for t in texts), (q["id"], keyword)


@pytest.mark.parametrize("site", SITES, ids=[p.name for p in SITES])
def test_conversation_turns_name_pages_that_hold_their_keywords(site: Path) -> None:
    corpus = _corpus(site)
    conversations = _rows(site / "conversations.jsonl")
    assert len({c["id"] for c in conversations}) == len(conversations) >= 4
    for conv in conversations:
        assert len(conv["turns"]) >= 2, conv["id"]
        for n, turn in enumerate(conv["turns"], start=1):
            if turn["gold"] is None:  # a follow-up the site does not answer says which search showed it
                assert turn.get("why_absent") and not turn["answer_keywords"], (conv["id"], n)
                continue
            texts = [(corpus / g).read_text(encoding="utf-8").lower() for g in turn["gold"]]
            assert turn["answer_keywords"], (conv["id"], n)
            for keyword in turn["answer_keywords"]:
                assert any(keyword.lower() in t for t in texts), (conv["id"], n, keyword)
