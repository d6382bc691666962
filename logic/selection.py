"""User-provided context mode: the user's text selection, chunked and scored like indexed chunks."""

from __future__ import annotations

import math

from langchain_core.embeddings import Embeddings

from logic.chunking import chunk_markdown
from logic.types import Chunk

SOURCE = "selection"
TITLE = "Your selection"
# Smaller than the index's 200-token chunks: a selection is short and a question usually targets one
# paragraph of it, whose match a whole-selection chunk would dilute (a robot-kinematics note: 0.31 → 0.52
# for a question on one paragraph; off-topic questions stay near 0).
CHUNK_TOKENS = 100


def _cosine(a: list[float], b: list[float]) -> float:
    """Return the cosine similarity of two vectors (0 for a zero vector)."""
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def selection_chunks(text: str, embeddings: Embeddings, query_vector: list[float]) -> list[Chunk]:
    """Split the selection as ingest splits a page and score each part against the query."""
    parts = chunk_markdown(text, SOURCE, CHUNK_TOKENS)
    # Embedded as documents, like indexed chunks, so scores are comparable with the index's gate.
    vectors = embeddings.embed_documents([f"{TITLE}\n\n{p.body}" for p in parts]) if parts else []
    return [
        {
            "chunk_id": f"{SOURCE}-{n}",
            "source": SOURCE,
            "source_url": f"{SOURCE}#part-{n}",
            "title": TITLE,
            "heading_hierarchy": part.heading_hierarchy or [f"Part {n}"],
            "score": round(_cosine(query_vector, vector), 4),
            "text": part.body,
        }
        for n, (part, vector) in enumerate(zip(parts, vectors, strict=True), start=1)
    ]
