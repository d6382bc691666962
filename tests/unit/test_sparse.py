"""The BM25 encoder is fastembed's: Snowball-stemmed terms, saturated weights, no model hub, stable term ids."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tools import sparse


def weights(vector: Any) -> dict[int, float]:
    return dict(zip(vector.indices, vector.values, strict=True))


def test_stemming_matches_word_forms_plural_stripping_missed() -> None:
    # "calibrating" / "calibration" / "calibrated" share one Snowball stem; "sensors" meets "sensor".
    query = set(sparse.encoder().embed_query("How is calibration of sensors done?").indices)
    chunk = set(sparse.encoder().embed_documents(["We calibrated each sensor before calibrating the arm."])[0].indices)
    assert len(query & chunk) == 2


def test_stopwords_carry_no_weight() -> None:
    assert sparse.encoder().embed_query("what is the").indices == []


def test_document_weights_are_bm25_term_frequencies() -> None:
    # Three terms in a chunk of the average length: the length norm is k1 = 1.2, so a term seen tf
    # times weighs tf * 2.2 / (tf + 1.2): the repeated "robot" 4.4 / 3.2, the single "arm" 1.
    vector = sparse.encoder(3.0).embed_documents(["The robot, the robot arms"])[0]
    assert sorted(weights(vector).values()) == pytest.approx([1.0, 2 * 2.2 / 3.2])


def test_a_longer_chunk_weighs_the_same_term_less() -> None:
    short, long = sparse.encoder(4.0).embed_documents(["robot arm", "robot arm gripper wheel camera lidar joint"])
    robot = set(short.indices) & set(long.indices)
    assert all(weights(short)[t] > weights(long)[t] > 0 for t in robot) and robot


def test_encoding_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    sparse._cache.clear()

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("the BM25 encoder tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert sparse.encoder(50.0).embed_query("robot arm").indices


def test_average_length_counts_stemmed_content_terms() -> None:
    assert sparse.average_length(["the robot arm", "a gripper"]) == 1.5
    assert sparse.average_length([]) == 1.0


ROOT = Path(__file__).resolve().parents[2]
TEXTBOOK = Path(os.environ.get("RAG_AGENT_SHARED", ROOT.parent / "shared")) / "eval" / "textbook" / "corpus"
ODD = ["How is calibration of sensors done?", "what is the", "Isaac Sim's robots", "max_particles _ __init__ x_y",
       "Ünïcödé naïve café — “quoted” ¿qué?", "a" * 41 + " arm", "ROS2/ROS 2: rclpy.init() → spin()", "", "_ _"]


def test_query_terms_are_fastembeds_bm25_query_terms() -> None:
    # A turn tokenises its question without importing fastembed (0.2-0.6 s of a cold ask): the
    # ids must still be the ones fastembed's Bm25 wrote at ingest, on every line of a real corpus.
    if not TEXTBOOK.is_dir():
        pytest.skip(f"the shared textbook corpus is not beside this checkout: {TEXTBOOK}")
    texts = ODD + [line for page in sorted(TEXTBOOK.rglob("*.md")) for line in page.read_text().splitlines()]
    encoder = sparse.encoder()
    mismatched = [t for t in texts if sparse.query_terms(t) != sorted(int(i) for i in encoder.embed_query(t).indices)]
    assert len(texts) > 1000 and mismatched == []
