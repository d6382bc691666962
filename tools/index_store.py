"""The write side of an index, one interface for both stores: the embedded snapshot store, or a Qdrant server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


@dataclass
class Points:
    """A batch of chunks to store: their ids, documents, dense vectors and (hybrid) BM25 vectors."""

    ids: list[str]
    documents: list[Document]
    dense: np.ndarray[Any, Any]  # (rows, dimension), as the embedder returned them
    sparse: list[tuple[list[int], list[float]]] | None = None  # (term ids, weights) per row


class IndexStore(Protocol):
    """What ingest needs of a store: pages in, pages out, and what it holds."""

    # True when a batch is stored whole or not at all: ingest then need not mark pages pending per batch.
    atomic_batches: bool

    def exists(self) -> bool:
        """Tell whether the collection exists (possibly empty)."""

    def check(self, info: dict[str, Any]) -> None:
        """Raise when the stored index cannot be continued as the manifest entry describes it."""

    def create(self, dimension: int, mode: str) -> None:
        """Make sure the collection exists, for vectors of `dimension` in this retrieval mode."""

    def drop(self) -> None:
        """Drop every chunk (a --recreate); readers keep the last published index until `finish`."""

    def stored_sources(self) -> set[str]:
        """Return the pages the store holds chunks of."""

    def delete_sources(self, sources: list[str]) -> None:
        """Delete every chunk of these pages."""

    def holds(self, source: str, documents: list[tuple[str, Document]]) -> bool:
        """Tell whether the page's stored chunks are exactly these (ids, texts, metadata): nothing to write."""

    def write(self, pages: list[str], points: Points, stale: list[str]) -> None:
        """Store the chunks of these pages; the older chunks of the pages in `stale` go once the new ones are in."""

    def flush(self) -> None:
        """Make every batch written so far durable (called before the manifest records their pages)."""

    def count(self) -> int:
        """Return how many chunks the store holds."""

    def iter_texts(self) -> Iterator[str]:
        """Yield the indexed text of every chunk."""

    def finish(self, info: dict[str, Any], changed: bool, embeddings: Embeddings | None = None) -> None:
        """Publish what was written to readers (the embedded store merges it into a new snapshot).

        `embeddings` is ingest's embedder: the embedded store embeds the answerer's passages with it.
        """

    def close(self) -> None:
        """Release the store (the embedded store's write lock)."""
