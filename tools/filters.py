"""Metadata filters at search time: validated filters as a Scope, and a Scope as a Qdrant filter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from logic.filters import Scope, matching_sources, section_headings

if TYPE_CHECKING:  # only the Qdrant paths build a qdrant filter; a turn on the embedded index never imports it
    from qdrant_client import models


def scope(filters: dict[str, str], info: Mapping[str, Any]) -> Scope | None:
    """Validate `filters` against the index's manifest entry and return where to search (None: no filters)."""
    if not filters:
        return None
    sections = info.get("sections") or {}
    sources = matching_sources(filters, info.get("documents", {}), sections)
    return Scope(tuple(sources), tuple(section_headings(filters, sections)))


def to_qdrant(where: Scope | None) -> models.Filter | None:
    """Restrict a Qdrant search to a scope (local Qdrant has no prefix match, so prefixes are expanded)."""
    if where is None:
        return None
    from qdrant_client import models  # importing qdrant_client costs most of a cold start: only here

    must: list[Any] = [models.FieldCondition(key="metadata.source", match=models.MatchAny(any=list(where.sources)))]
    if where.headings:  # an array field matches when any of its elements does: chunks under the heading, at any depth
        must.append(models.FieldCondition(key="metadata.heading_hierarchy",
                                          match=models.MatchAny(any=list(where.headings))))
    return models.Filter(must=must)
