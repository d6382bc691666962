"""Metadata filters on retrieval: which keys exist, which indexed sources a filter admits, how to name it."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from logic.errors import InvalidInputError


def module_of(source: str) -> str:
    """Return a source's module: its first folder, or "" for a page at the root."""
    return source.split("/", 1)[0] if "/" in source else ""


def chapter_of(source: str) -> str:
    """Return a source's chapter id: its path without the file extension."""
    return source.rsplit(".", 1)[0] if "." in source.rsplit("/", 1)[-1] else source


# key -> (what a source's value is, whether the filter value is a prefix of it)
_KEYS: dict[str, tuple[Callable[[str], str], bool]] = {
    "module": (module_of, False),
    "chapter": (chapter_of, False),
    "source": (lambda source: source, True),
}
# A section is a heading: it admits the chunks under it, subsections included.
KEYS = (*_KEYS, "section")


@dataclass(frozen=True)
class Scope:
    """Where a search may look: these sources and, when given, only chunks under one of these headings."""

    sources: tuple[str, ...]
    headings: tuple[str, ...] = ()


def _listing(values: Iterable[str], limit: int = 20) -> str:
    """List known values for an error message, shortened when there are many."""
    ordered = sorted(v for v in set(values) if v)
    more = f", … ({len(ordered) - limit} more)" if len(ordered) > limit else ""
    return ", ".join(ordered[:limit]) + more if ordered else "(none)"


def _section_sources(value: str, sections: Mapping[str, list[str]]) -> set[str]:
    """Return the sources with a heading equal to `value` (case aside), or raise naming the closest headings."""
    if not sections:
        raise InvalidInputError("this index has no list of sections (it was built before section filters); "
                                "re-run ingest with --recreate to filter by section")
    wanted = value.strip().casefold()
    matching = {s for s, headings in sections.items() if any(h.casefold() == wanted for h in headings)}
    if not matching:
        headings = sorted({h for hs in sections.values() for h in hs})
        close = difflib.get_close_matches(value, headings, n=5, cutoff=0.5)
        hint = f"closest sections: {', '.join(close)}" if close else f"{len(headings)} sections are indexed"
        raise InvalidInputError(f"unknown section {value!r} (filter section={value}); {hint}")
    return matching


def section_headings(filters: dict[str, str], sections: Mapping[str, list[str]]) -> list[str]:
    """Return the indexed headings, as spelled in the index, that a section filter names."""
    wanted = str(filters.get("section", "")).strip().casefold()
    return sorted({h for hs in sections.values() for h in hs if wanted and h.casefold() == wanted})


def matching_sources(filters: dict[str, str], sources: Iterable[str],
                     sections: Mapping[str, list[str]] | None = None) -> list[str]:
    """Return the indexed sources every filter admits, or raise InvalidInputError naming a bad key or value."""
    if not isinstance(filters, dict):
        raise InvalidInputError("filters must be a mapping of key to value, e.g. {\"module\": \"module-3\"}")
    indexed = set(sources)
    selected = sorted(indexed)
    for key, value in filters.items():
        if key not in KEYS:
            raise InvalidInputError(f"unknown filter key {key!r}; known keys: {', '.join(KEYS)}")
        if not isinstance(value, str) or not value.strip():
            raise InvalidInputError(f"filter {key} needs a non-empty text value")
        if key == "section":
            section_sources = _section_sources(value, sections or {})
            selected = [s for s in selected if s in section_sources]
            continue
        value_of, prefix = _KEYS[key]
        matching = {s for s in indexed if (value_of(s).startswith(value) if prefix else value_of(s) == value)}
        if not matching:
            known = _listing(value_of(s) for s in indexed)
            what = "no indexed source starts with" if prefix else f"unknown {key}"
            raise InvalidInputError(f"{what} {value!r} (filter {key}={value}); known {key} values: {known}")
        selected = [s for s in selected if s in matching]
    if not selected:
        raise InvalidInputError(f"no indexed page matches all of the filters {describe(filters)} at once")
    return selected


def describe(filters: dict[str, str]) -> str:
    """Name the filters for a sentence, e.g. "module-3" or "module-3, chapter module-3/nav2"."""
    return ", ".join(v if k == "module" else f"{k} {v}" for k, v in filters.items())
