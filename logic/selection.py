"""User-provided context mode: the user's text selection, chunked and scored like indexed chunks."""

from __future__ import annotations

import math
import re
from typing import Any

from langchain_core.embeddings import Embeddings

from logic import ranking
from logic.chunking import Passage, chunk_markdown
from logic.lexical import Lexicon, terms
from logic.types import Chunk

SOURCE = "selection"
TITLE = "Your selection"
# Smaller than the index's 200-token chunks: a selection is short and a question usually targets one
# paragraph of it, whose match a whole-selection chunk would dilute (a robot-kinematics note: 0.31 → 0.52
# for a question on one paragraph; off-topic questions stay near 0).
CHUNK_TOKENS = 100


def cosine(a: list[float], b: list[float]) -> float:
    """Return the cosine similarity of two vectors (0 for a zero vector)."""
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def selection_chunks(text: str, embeddings: Embeddings, query_vector: list[float], scored: bool = True) -> list[Chunk]:
    """Split the selection as ingest splits a page and score each part against the query (0 when not `scored`)."""
    parts = chunk_markdown(text, SOURCE, CHUNK_TOKENS)
    if not scored:  # "Summarize this" reads each section's first part whatever its score: nothing to embed
        return [_part(n, part, 0.0) for n, part in enumerate(parts, start=1)]
    # Embedded as documents, like indexed chunks, so scores are comparable with the index's gate.
    vectors = embeddings.embed_documents([f"{TITLE}\n\n{p.body}" for p in parts]) if parts else []
    return [_part(n, part, cosine(query_vector, vector))
            for n, (part, vector) in enumerate(zip(parts, vectors, strict=True), start=1)]


def _part(n: int, part: Passage, score: float) -> Chunk:
    """Return the selection's n-th part as a retrieved chunk."""
    return {
        "chunk_id": f"{SOURCE}-{n}",
        "source": SOURCE,
        "source_url": f"{SOURCE}#part-{n}",
        "title": TITLE,
        "heading_hierarchy": part.heading_hierarchy or _untitled(n),
        "score": round(score, 4),
        "text": part.body,
    }


def _untitled(n: int) -> list[str]:
    """Return the heading path shown for the selection's n-th part when no heading stands above it."""
    return [f"Part {n}"]


def own_headings(chunk: Chunk) -> list[str]:
    """Return a chunk's heading path as its text has it: none for a selection part without a heading."""
    path = chunk["heading_hierarchy"]
    untitled = chunk["source"] == SOURCE and path == _untitled(int(chunk["chunk_id"].rsplit("-", 1)[-1]))
    return [] if untitled else path


# A question about the selection is answered when the selection holds this share (IDF-weighted) of what it
# asks for: "explain the Xacro code here" names Xacro, which must be there; "switch these to Cyclone DDS"
# asks for what the page never says.
ABOUT_SELECTION_COVERAGE = 0.75
# Words that point at the selection itself rather than at a topic ("summarize this page", "the code here").
_POINTERS = frozenset("this these here above below selection selected page text passage snippet excerpt".split())
# Words asking for the gist of a text rather than a fact in it.
_GIST = frozenset("summarize summarise summary tldr overview gist recap".split())
# Words that name the task or the kind of content asked for; they are not facts the selection must contain.
_TASK_WORDS = _GIST | frozenset(
    "explain describe described list listed tell say says said mean means main point key idea ideas stated state "
    "states mention mentioned cover covered compare comparison compared code snippet table section part page text "
    "passage selection example step steps what language written write line lines advice tip tips recommendation "
    "recommendations guidance guideline guidelines suggestion suggestions rule rules detail details".split())
# A summary quotes the opening sentences of this many parts of the selection (its sections' first parts).
OUTLINE_PARTS = 8


def _words(question: str) -> set[str]:
    """Return a question's lowercase words."""
    return set(re.findall(r"[a-z]+", question.lower()))


def points_at_selection(question: str) -> bool:
    """Tell whether a question is about the selection itself: it points at it ("this", "here") or asks to sum it up."""
    return bool(_words(question) & (_POINTERS | _GIST))


def sums_up(question: str) -> bool:
    """Tell whether a question asks for the gist of the whole selection ("Summarize this page", "an overview")."""
    return bool(_words(question) & _GIST) and not asked_terms(question)


def outline_parts(hits: list[Chunk], limit: int) -> list[Chunk]:
    """Return the parts a skim reads, in reading order: each section's first part, top-level sections first."""
    openers = [n for n, c in enumerate(hits) if n == 0 or c["heading_hierarchy"] != hits[n - 1]["heading_hierarchy"]]
    # A page of many sections: its top-level ones (then the next level) before any subsection.
    chosen = sorted(openers, key=lambda n: (len(hits[n]["heading_hierarchy"]), n))[:limit]
    # A page of few sections: the rest of its parts, from the top, as far as the limit.
    chosen += [n for n in range(len(hits)) if n not in chosen][:limit - len(chosen)]
    return [hits[n] for n in sorted(chosen)]


def asked_terms(question: str) -> list[str]:
    """Return the question's content terms minus pointer and task words: what the selection must contain."""
    return [t for t in dict.fromkeys(terms(question)) if t not in _POINTERS and t not in _TASK_WORDS]


def covered_share(question: str, lexicon: Lexicon) -> float:
    """Return the IDF-weighted share of the question's asked-for terms that the selection contains (1.0 for none)."""
    wanted = asked_terms(question)
    total = sum(lexicon.idf(t) for t in wanted)
    if total <= 0:
        return 1.0
    return sum(lexicon.idf(t) for t in wanted if lexicon.df.get(t, 0) > 0) / total


def about_selection(query: str, hits: list[Chunk], lexicon: Lexicon, top_k: int) -> dict[str, Any]:
    """Rank the selection's parts; a question about the selection itself is judged by what it asks for."""
    if not points_at_selection(query):
        chunks, confidence = ranking.rank(query, hits, lexicon, top_k)
        return {"retrieved": chunks, "top_score": ranking.top_cosine(chunks), "gate_score": confidence}
    # "Summarize this", "explain the code here": the selection is the subject, so similarity to the
    # question's words says little; what matters is whether the selection holds what is asked for.
    if sums_up(query):
        chunks = outline_parts(hits, max(top_k, OUTLINE_PARTS))
    else:
        # Matched on what it asks for: "this", "explain", "code" name the task, and part texts using them are no nearer.
        wanted = asked_terms(query)
        chunks = ranking.order(query, hits, lexicon, top_k, wanted=wanted) if wanted else hits[:top_k]
    chunks = [{**c, "relevance": 1.0} for c in chunks]  # all of them are the subject: quote from any
    return {"retrieved": chunks, "top_score": ranking.top_cosine(chunks),
            "gate_score": round(covered_share(query, lexicon), 4), "threshold": ABOUT_SELECTION_COVERAGE}
