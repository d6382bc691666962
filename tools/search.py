"""Where a query is answered from: the embedded snapshot in local mode, the Qdrant server with QDRANT_URL."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from qdrant_client import models

from logic.errors import AgentError, IndexMissingError, RetrievalError
from tools import embedded_export, embedded_index, manifest, sparse, vectorstore

log = logging.getLogger(__name__)


def filter_values(query_filter: models.Filter | None) -> tuple[list[str] | None, list[str] | None]:
    """Read the sources and headings out of a filter built by tools.filters.to_qdrant."""
    sources: list[str] | None = None
    headings: list[str] | None = None
    for condition in (query_filter.must if query_filter is not None else None) or []:
        match = getattr(condition, "match", None)
        values = [str(v) for v in getattr(match, "any", None) or []]
        key = getattr(condition, "key", "")
        if key == "metadata.source":
            sources = values
        elif key == "metadata.heading_hierarchy":
            headings = values
        else:  # only filters.to_qdrant builds filters; anything else is a programming error
            raise RetrievalError(f"the embedded index cannot filter on {key or type(condition).__name__}")
    return sources, headings


def snapshot(data_dir: str | Path, collection: str, mode: str) -> embedded_index.Snapshot:
    """Return the collection's snapshot, exporting it once for an index ingested before snapshots existed."""
    snap = embedded_index.current(data_dir, collection)
    if snap is not None:
        return snap
    client = vectorstore.open_client(data_dir)
    try:
        if not client.collection_exists(collection):
            raise IndexMissingError(f"collection {collection!r} is in the manifest but not in the index under "
                                    f"{data_dir}; re-run `rag-agent ingest`")
        info = manifest.load(data_dir)["collections"].get(collection) or {}
        log.warning("preparing the embedded index of %r for fast search (once)", collection)
        embedded_export.export_collection(client, collection, data_dir, {**info, "retrieval": mode})
    finally:
        vectorstore.release(data_dir)  # other processes read the snapshot, never Qdrant: let them in
    snap = embedded_index.current(data_dir, collection)
    assert snap is not None, "export makes a snapshot current"
    return snap


def find(data_dir: str | Path, collection: str, embeddings: Embeddings, vector: list[float], k: int, *,
         mode: str = vectorstore.DENSE, text: str = "",
         query_filter: models.Filter | None = None) -> list[tuple[Document, float]]:
    """Return k chunks for an already-embedded query, with cosine scores; hybrid mode also matches `text` by BM25."""
    if os.environ.get("QDRANT_URL"):  # server-side hybrid search: the scale-out path
        return vectorstore.search(vectorstore.open_client(data_dir), collection, embeddings, vector, k, mode=mode,
                                  text=text, query_filter=query_filter)
    try:
        snap = snapshot(data_dir, collection, mode)
        sources, headings = filter_values(query_filter)
        terms = None
        if mode == vectorstore.HYBRID and text:
            terms = [int(i) for i in sparse.encoder().embed_query(text).indices]
        return embedded_index.search(snap, vector, k, query_terms=terms, sources=sources, headings=headings)
    except AgentError:
        raise
    except Exception as exc:  # a damaged or half-copied snapshot is a retrieval outage to the user
        raise RetrievalError(f"the embedded index failed ({type(exc).__name__}: {exc}); re-run ingest") from exc
