"""Reciprocal rank fusion ranks exactly as Qdrant's, which the embedded index no longer imports for it."""

from __future__ import annotations

import random

import pytest
from qdrant_client import models
from qdrant_client.hybrid.fusion import reciprocal_rank_fusion as qdrant_rrf

from logic.fusion import reciprocal_rank_fusion


def qdrant_order(rankings: list[list[int]], limit: int) -> list[int]:
    points = [[models.ScoredPoint(id=row, version=0, score=0.0) for row in ranking] for ranking in rankings]
    return [int(p.id) for p in qdrant_rrf(points, limit)]


@pytest.mark.parametrize(("rankings", "limit"), [
    ([[1, 2, 3], [3, 2, 1]], 3),  # every item ties: first-seen order decides
    ([[5, 9, 2, 7], [7, 4, 5]], 3),  # overlap, items only one side found, a cut at the limit
    ([[1, 2, 3], []], 2),  # no keyword match
    ([[], []], 5),
    ([[8], [8]], 10),
])
def test_fusion_ranks_as_qdrant_does(rankings: list[list[int]], limit: int) -> None:
    assert reciprocal_rank_fusion(rankings, limit) == qdrant_order(rankings, limit)


def test_fusion_ranks_as_qdrant_does_on_random_candidate_lists() -> None:
    draw = random.Random(13)
    for _ in range(300):
        k = draw.randint(1, 12)
        rankings = [draw.sample(range(30), draw.randint(0, k)) for _ in range(2)]
        assert reciprocal_rank_fusion(rankings, k) == qdrant_order(rankings, k)
