"""The offline BM25 encoder: exact weights, indices that never change, queries weighed apart from chunks."""

from __future__ import annotations

import pytest

from tools.sparse import BM25Encoder, average_length

# Hash indices stored with every chunk; tests/integration/test_sparse_process.py checks them in other processes.
ROBOT, ARM = 3626729188, 2556329620


def weights(vector: object) -> dict[int, float]:
    return dict(zip(vector.indices, vector.values, strict=True))  # type: ignore[attr-defined]


def test_document_weights_are_bm25_term_frequencies() -> None:
    # "The" is a stopword and "arms" counts as "arm": three terms, as long as the average chunk,
    # so the length norm is k1 = 1.2 and a term seen tf times weighs tf * 2.2 / (tf + 1.2).
    vector = BM25Encoder(average_length=3).embed_document("The robot, the robot arms")
    assert weights(vector) == pytest.approx({ROBOT: 2 * 2.2 / 3.2, ARM: 1.0})
    assert vector.indices == sorted(vector.indices)


def test_a_longer_chunk_weighs_the_same_term_less() -> None:
    encoder = BM25Encoder(average_length=4)
    short = weights(encoder.embed_document("robot arm"))[ROBOT]
    long = weights(encoder.embed_document("robot arm gripper wheel camera lidar joint motor"))[ROBOT]
    assert short > long > 0


def test_repeating_a_term_saturates() -> None:
    encoder = BM25Encoder(average_length=10)
    once, many = (weights(encoder.embed_document(" ".join(["robot"] * n)))[ROBOT] for n in (1, 50))
    assert once < many < encoder.k1 + 1


def test_query_terms_weigh_one_each_however_often_they_occur() -> None:
    vector = BM25Encoder().embed_query("What is a robot arm? Robot arms!")
    assert weights(vector) == {ROBOT: 1.0, ARM: 1.0}


def test_average_length_counts_content_terms() -> None:
    assert average_length(["the robot arm", "a gripper"]) == 1.5
    assert average_length([]) == 1.0
