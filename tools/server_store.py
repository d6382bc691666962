"""The index on a Qdrant server (QDRANT_URL): points written and deleted through qdrant-client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from tools import vectorstore
from tools.index_store import Points


class ServerStore:
    """A collection on a Qdrant server, which stores, indexes and serves it."""

    atomic_batches = False  # an upsert can stop part-way: ingest marks each batch's pages pending first

    def __init__(self, data_dir: str | Path, collection: str) -> None:
        self.client, self.collection = vectorstore.open_client(data_dir), collection

    def exists(self) -> bool:
        """Tell whether the server has the collection."""
        return bool(self.client.collection_exists(self.collection))

    def check(self, info: dict[str, Any]) -> None:
        """Accept any state: the server's points are read back as they are."""

    def create(self, dimension: int, mode: str) -> None:
        """Create the collection if missing and index the payload fields deletes and filters use."""
        vectorstore.ensure_collection(self.client, self.collection, dimension, mode=mode)
        vectorstore.ensure_payload_indexes(self.client, self.collection, ["metadata.source", "metadata.module_name"])

    def drop(self) -> None:
        """Delete the collection."""
        if self.client.collection_exists(self.collection):
            self.client.delete_collection(self.collection)

    def stored_sources(self) -> set[str]:
        """Return the pages the collection holds chunks of."""
        return vectorstore.stored_sources(self.client, self.collection)

    def delete_sources(self, sources: list[str]) -> None:
        """Delete every chunk of these pages."""
        vectorstore.delete_sources(self.client, self.collection, sources)

    def holds(self, source: str, documents: list[tuple[str, Document]]) -> bool:
        """Tell whether the server holds exactly these chunks of the page (one filtered scroll, no vectors)."""
        return vectorstore.holds(self.client, self.collection, source, documents)

    def write(self, pages: list[str], points: Points, stale: list[str]) -> None:
        """Upsert the points as langchain-qdrant writes them, then delete the stale pages' other chunks."""
        vectorstore.upsert(self.client, self.collection, points)
        # New chunks are in before old ones go, so a changed page is never missing from the index.
        vectorstore.delete_stale(self.client, self.collection, stale, set(points.ids))

    def flush(self) -> None:
        """Nothing to do: every write waited for the server."""

    def count(self) -> int:
        """Return the collection's point count."""
        return int(self.client.count(self.collection).count)

    def iter_texts(self) -> Iterator[str]:
        """Yield every chunk's text."""
        return vectorstore.iter_texts(self.client, self.collection)

    def finish(self, info: dict[str, Any], changed: bool, embeddings: Embeddings | None = None) -> None:
        """Nothing to publish: the server serves what it stores."""

    def close(self) -> None:
        """Keep the process's client (shared with search)."""
