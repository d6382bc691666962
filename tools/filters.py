"""The Qdrant side of metadata filters: turn validated filters into a search filter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qdrant_client import models

from logic.filters import matching_sources, section_headings


def to_qdrant(sources: list[str], headings: list[str] | None = None) -> models.Filter:
    """Restrict a search to the given sources (local Qdrant has no prefix match, so prefixes are expanded)."""
    must: list[Any] = [models.FieldCondition(key="metadata.source", match=models.MatchAny(any=sources))]
    if headings:  # an array field matches when any of its elements does: chunks under the heading, at any depth
        must.append(models.FieldCondition(key="metadata.heading_hierarchy", match=models.MatchAny(any=headings)))
    return models.Filter(must=must)


def scope(filters: dict[str, str], info: Mapping[str, Any]) -> models.Filter | None:
    """Validate `filters` against the index's manifest entry and return the search filter (None: no filters)."""
    if not filters:
        return None
    sections = info.get("sections") or {}
    sources = matching_sources(filters, info.get("documents", {}), sections)
    return to_qdrant(sources, section_headings(filters, sections))
