"""What an ingest tells its caller: pages added, updated, removed, unchanged (and how a site's were known to be)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logic.injection import flag_pages
from tools.fetch import NOT_MODIFIED
from tools.sources import LASTMOD, Collected


@dataclass
class IngestReport:
    """What a run changed, and what it could not read."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    embedded: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # indexed, but not exactly as written
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth knowing, nothing to fix
    # Pages carrying text addressed to a model (a likely prompt injection): indexed as data, never quoted.
    flagged: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    retrieval: str = ""
    # A site's pages: downloaded in full, re-embedded, and not downloaded as unchanged (sitemap lastmod, HTTP 304).
    fetched: int = 0
    changed: int = 0  # added + updated
    unchanged_lastmod: int = 0
    unchanged_304: int = 0


def build(found: Collected, known: dict[str, str], changed: list[str], removed: list[str], kept: dict[str, str],
          recovered: str) -> IngestReport:
    """Count what this run changes; `kept` are the pages not downloaded as unchanged whose chunks stay."""
    missing = sorted(set(found.unchanged) - set(kept))
    # Only a page skipped by a stale record (its chunks lost since) lands here; it is fetched next time.
    warnings = [recovered] if recovered else []
    warnings += [f"{s} was not downloaded ({found.unchanged[s]}) but its chunks are missing from the index; "
                 "the next ingest fetches it again" for s in missing]
    return IngestReport(
        added=sum(s not in known for s in changed), updated=sum(s in known for s in changed),
        removed=sum(s in known for s in removed), unchanged=len(found.docs) - len(changed) + len(kept),
        failed=dict(found.failed), skipped=dict(found.skipped), problems=dict(found.problems), warnings=warnings,
        flagged=flag_pages({s: text for s, (_, text) in found.docs.items()}),
        fetched=found.fetched, changed=len(changed),
        unchanged_lastmod=sum(why == LASTMOD for why in kept.values()),
        unchanged_304=sum(why == NOT_MODIFIED for why in kept.values()))
