"""Order dense candidates by semantic, lexical and document evidence, and score the gate's confidence."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

from logic import answerability
from logic.lexical import Lexicon, terms
from logic.types import Chunk

# Measured with `rag-agent eval` on labelled questions (docs/benchmarks.md, "Ranking and gate").
# Ranking leans on the embedding; lexical coverage only breaks near-ties, such as an acronym
# the embedder does not know ("What is AMCL?").
RANK_LEXICAL_WEIGHT = 0.1
# A section whose own heading names the question's subject ("Building for Release", "not_in_nav") is where
# the docs answer it; the text of a neighbour may name it as often. Small: the gate reads the same order
# (0.05 moved no turn's answered/refused status on the sites benchmark; 0.1 refused in-scope questions).
SECTION_HEADING_WEIGHT = 0.05
# A section is more likely the answer when its page has several strong chunks, not one lucky one.
DOCUMENT_WEIGHT = 0.3
DOCUMENT_DEPTH = 3
# The sections the gate reads (answerability.DEPTH) keep their order; the places after them go first to pages not
# shown yet, each chunk's score less this much per chunk of its page already placed. Without it one page's many
# similar chunks (release notes, a long reference page) filled all five places, and the page that answers was
# not among them: across the tuning sites' in-scope questions a gold page entered the top five 10 more times in
# 220, the passage holding the keywords 2 fewer (docs/benchmarks.md, "Pages after the first three").
PAGE_REPEAT_PENALTY = 0.1
# An identifier the question quotes (INDEX_MISSING, max_particles, world.step) is found verbatim in the
# section that documents it; the embedder and the word-level statistics split it into common words.
IDENTIFIER_WEIGHT = 0.2
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+")


def _identifiers(query: str) -> list[re.Pattern[str]]:
    """Return patterns for the identifiers a question quotes (a name with an underscore or a dot inside)."""
    found = dict.fromkeys(m.group(0) for m in _IDENTIFIER.finditer(query) if len(m.group(0)) > 3)  # not "e.g"
    return [re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])", re.IGNORECASE) for name in found]


def page_sizes(metadata: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Return each hit's page chunk count from stored metadata; older indexes lack it and count as long pages."""
    return {str(m.get("source", "")): int(m.get("page_chunks") or DOCUMENT_DEPTH) for m in metadata}


def candidates_for(top_k: int) -> int:
    """Return how many dense neighbours to fetch so that re-ranking has room to work."""
    return max(4 * top_k, 30)


def rank(query: str, hits: list[Chunk], lexicon: Lexicon, top_k: int,
         off_topic_of: Callable[[Chunk], float] | None = None,
         sizes: Mapping[str, int] | None = None,
         read: Callable[[list[Chunk], dict[str, float]], float | None] | None = None,
         ordinary: Container[str] = frozenset()) -> tuple[list[Chunk], float | None]:
    """Return the best `top_k` chunks, best first, and the gate's score: how likely they answer the query.

    `off_topic_of` (follow-ups only) measures how far a section is from the conversation so far;
    `sizes` gives each page's chunk count, as `page_sizes` reads it (a page missing from it counts as long);
    `read(best, features)` reads the best sections and returns how likely the best passage answers (None:
    nothing read; the gate then scores without it); `ordinary` are the everyday English words a name may be
    (`answerability.everyday`).
    """
    if not hits:
        return [], None
    ranked = order(query, hits, lexicon, top_k, sizes)
    found = answerability.features(query, ranked, lexicon, off_topic_of, ordinary=ordinary)
    reading = read(ranked[:answerability.DEPTH], found) if read is not None else None
    return ranked, answerability.gate_score(found if reading is None else answerability.with_reading(found, reading))


def order(query: str, hits: list[Chunk], lexicon: Lexicon, top_k: int,
          sizes: Mapping[str, int] | None = None, wanted: list[str] | None = None) -> list[Chunk]:
    """Return the best `top_k` chunks, best first, each with its ranking score as `relevance`.

    `wanted` are the terms to match when not all of the query's are (a selection's pointer words are not).
    """
    query_terms = wanted if wanted is not None else list(dict.fromkeys(terms(query)))
    coverage = [
        lexicon.coverage(query_terms, " ".join([c["title"], *c["heading_hierarchy"], c["text"]])) for c in hits
    ]
    relevance = [c["score"] + RANK_LEXICAL_WEIGHT * cov for c, cov in zip(hits, coverage, strict=True)]
    relevance = [r + SECTION_HEADING_WEIGHT * lexicon.coverage(query_terms, " ".join(c["heading_hierarchy"][-1:]))
                 for c, r in zip(hits, relevance, strict=True)]
    identifiers = _identifiers(query)
    if identifiers:
        relevance = [r + IDENTIFIER_WEIGHT * sum(bool(p.search(c["text"])) for p in identifiers) / len(identifiers)
                     for c, r in zip(hits, relevance, strict=True)]
    by_source: dict[str, list[float]] = defaultdict(list)
    for chunk, value in zip(hits, relevance, strict=True):
        by_source[chunk["source"]].append(value)
    # A page's evidence is its best few chunks; a page shorter than that is judged on all it has.
    depth = {s: max(1, min(DOCUMENT_DEPTH, (sizes or {}).get(s, DOCUMENT_DEPTH))) for s in by_source}
    page = {s: sum(sorted(v, reverse=True)[:DOCUMENT_DEPTH]) / depth[s] for s, v in by_source.items()}
    combined = [r + DOCUMENT_WEIGHT * page[c["source"]] for c, r in zip(hits, relevance, strict=True)]
    ranked = sorted(range(len(hits)), key=combined.__getitem__, reverse=True)
    best, rest = ranked[:min(top_k, answerability.DEPTH)], ranked[answerability.DEPTH:]
    placed = Counter(hits[i]["source"] for i in best)
    while rest and len(best) < top_k:
        # max() keeps the first of equals: among chunks of pages placed as often, the better ranked.
        pick = max(rest, key=lambda i: combined[i] - PAGE_REPEAT_PENALTY * placed[hits[i]["source"]])
        rest.remove(pick)
        best.append(pick)
        placed[hits[pick]["source"]] += 1
    return [{**hits[i], "relevance": round(combined[i], 4)} for i in best]


def top_cosine(chunks: list[Chunk]) -> float | None:
    """Return the best retrieval similarity among the chunks (None for none)."""
    return max((c["score"] for c in chunks), default=None)


def clears(top: float | None, threshold: float | None) -> bool:
    """Tell whether a retrieval score passes the gate: the one rule, also used by retrieve's filter check."""
    return top is not None and threshold is not None and top >= threshold
