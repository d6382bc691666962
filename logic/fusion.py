"""Reciprocal rank fusion of ranked lists, as Qdrant computes it (qdrant_client.hybrid.fusion)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)
# Qdrant's DEFAULT_RANKING_CONSTANT_K: the item at rank r (from 0) scores 1 / (r + 2).
RANKING_CONSTANT = 2


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Key]], limit: int) -> list[Key]:
    """Return the `limit` items with the highest summed 1 / (rank + constant), ties in order of first appearance."""
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1 / (rank + RANKING_CONSTANT)
    # sorted() is stable and dicts keep insertion order: ties stay in first-seen order, as in Qdrant's.
    return [item for item, _ in sorted(scores.items(), key=lambda pair: pair[1], reverse=True)[:limit]]
