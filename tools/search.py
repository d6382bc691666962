"""Where a query is answered from: the embedded snapshot by default, the Qdrant server with QDRANT_URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from logic.errors import AgentError, IndexMissingError, RetrievalError
from logic.filters import Scope
from tools import embedded_index, qdrant_search, sparse, vectorstore
from tools.settings import get_settings

# Metadata key of a hit's dense vector as stored, when the embedded index returns it (the server path does not).
VECTOR_KEY = embedded_index.VECTOR_KEY
LEGACY = "qdrant"  # where earlier versions kept qdrant-client's local mode (tools/embedded_store.py)


def snapshot(data_dir: str | Path, collection: str, mode: str) -> embedded_index.Snapshot:
    """Return the collection's published snapshot; an index without one was built by an earlier version."""
    snap = embedded_index.current(data_dir, collection)
    if snap is not None:
        return snap
    if Path(data_dir, LEGACY, "collection", collection).exists():
        raise IndexMissingError(f"the index of collection {collection!r} was built by an earlier version; run "
                                f"`rag-agent --collection {collection} ingest PATH --recreate` to rebuild it")
    if (embedded_index.root(data_dir, collection) / ".staging" / "journal.jsonl").exists():
        raise IndexMissingError(f"collection {collection!r} is being ingested for the first time (or its first "
                                "ingest stopped); wait for it to finish, or re-run `rag-agent ingest`")
    raise IndexMissingError(f"collection {collection!r} is in the manifest but its index is missing; "
                            "re-run `rag-agent ingest`")


def iter_texts(data_dir: str | Path, collection: str) -> Iterator[str]:
    """Yield the indexed text of every chunk: from the Qdrant server with QDRANT_URL, else the snapshot."""
    if get_settings().qdrant_url:
        yield from vectorstore.iter_texts(vectorstore.open_client(data_dir), collection)
        return
    snap = snapshot(data_dir, collection, vectorstore.DENSE)
    for row in range(snap.rows):
        yield snap.document(row).page_content


def find(data_dir: str | Path, collection: str, embeddings: Embeddings, vector: list[float], k: int, *,
         mode: str = vectorstore.DENSE, text: str = "",
         scope: Scope | None = None) -> list[tuple[Document, float]]:
    """Return k chunks for an already-embedded query, with cosine scores, within `scope` (None: everywhere).

    Hybrid mode also matches `text` by BM25.
    """
    if get_settings().qdrant_url:  # server-side hybrid search: the scale-out path
        return qdrant_search.search(vectorstore.open_client(data_dir), collection, embeddings, vector, k, mode=mode,
                                    text=text, scope=scope)
    try:
        snap = snapshot(data_dir, collection, mode)
        terms = sparse.query_terms(text) if mode == vectorstore.HYBRID and text else None
        return embedded_index.search(snap, vector, k, query_terms=terms,
                                     sources=list(scope.sources) if scope else None,
                                     headings=list(scope.headings) if scope else None)
    except AgentError:
        raise
    except Exception as exc:  # a damaged or half-copied snapshot is a retrieval outage to the user
        raise RetrievalError(f"the embedded index failed ({type(exc).__name__}: {exc}); re-run ingest") from exc


def stored_chunks(data_dir: str | Path, collection: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Return the stored metadata of the chunks with these ids that the index holds (others are left out)."""
    wanted = sorted({i for i in ids if i})
    if not wanted:
        return {}
    if get_settings().qdrant_url:
        try:
            points = vectorstore.open_client(data_dir).retrieve(collection, ids=wanted, with_payload=True)
        except ValueError:  # an id that is not a UUID: not one of ours
            return {}
        found = {str(p.id): dict((p.payload or {}).get("metadata") or {}) for p in points}
        return {k: v for k, v in found.items() if k in wanted}
    snap = snapshot(data_dir, collection, vectorstore.DENSE)
    docs = {i: snap.find(i) for i in wanted}
    return {i: dict(doc.metadata) for i, doc in docs.items() if doc is not None}


def chunks_at(data_dir: str | Path, collection: str,
              places: list[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the stored metadata (text, headings, …) of the chunk at each (page, place on the page) the index holds."""
    if not places:
        return {}
    if get_settings().qdrant_url:
        return qdrant_search.chunks_at(vectorstore.open_client(data_dir), collection, places)
    snap = snapshot(data_dir, collection, vectorstore.DENSE)
    found = {(source, index): snap.chunk(source, index) for source, index in places}
    return {place: dict(doc.metadata) for place, doc in found.items() if doc is not None}
