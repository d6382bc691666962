"""The Qdrant server side of the index (QDRANT_URL): its client, collection schema, writes and scans.

Without QDRANT_URL the index is the embedded snapshot store (tools/embedded_store.py) and nothing here runs.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from logic.errors import StorageError
from tools.settings import get_settings

# qdrant_client and langchain_qdrant (which imports it) cost most of a cold start, and a turn on the
# embedded index never needs them: each function that talks to Qdrant imports them itself.
if TYPE_CHECKING:
    from langchain_qdrant import QdrantVectorStore, SparseEmbeddings
    from qdrant_client import QdrantClient, models

    from tools.index_store import Points

DENSE, HYBRID = "dense", "hybrid"
MODES = (DENSE, HYBRID)
# The dense vector stays the collection's unnamed default in both modes, so a hybrid index is a dense
# index plus one named sparse vector, and dense-only search is the same call for either.
DENSE_VECTOR = ""
SPARSE_VECTOR = "bm25"

_clients: dict[str, QdrantClient] = {}
_lock = threading.Lock()


def open_client(data_dir: str | Path) -> QdrantClient:
    """Return this process's client of the Qdrant server QDRANT_URL names (`data_dir` is not used by a server)."""
    url = get_settings().qdrant_url
    if not url:
        raise StorageError(f"no Qdrant server is configured for the index in {data_dir}: set QDRANT_URL; "
                           "without it the index is the embedded store in the data folder")
    with _lock:
        if url not in _clients:
            from qdrant_client import QdrantClient

            key = get_settings().qdrant_api_key.get_secret_value() or None
            _clients[url] = QdrantClient(url=url, api_key=key, timeout=10)
        return _clients[url]


def close_clients() -> None:
    """Close every client (used by tests and at exit)."""
    with _lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def ensure_collection(client: QdrantClient, name: str, dimension: int, *, mode: str = DENSE) -> None:
    """Create the collection with cosine distance (plus BM25 sparse vectors in hybrid mode) if it does not exist."""
    from qdrant_client import models

    if not client.collection_exists(name):
        # IDF is left to Qdrant so it follows the collection as pages are added and removed.
        sparse = {SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)} if mode == HYBRID else None
        client.create_collection(
            name, vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE),
            sparse_vectors_config=sparse,
        )


def store(client: QdrantClient, collection: str, embeddings: Embeddings, *, validate: bool = True,
          sparse: SparseEmbeddings | None = None) -> QdrantVectorStore:
    """Wrap a collection as a LangChain vector store; with a sparse encoder it writes both vectors."""
    from langchain_qdrant import QdrantVectorStore, RetrievalMode

    # Validation embeds a probe text and reads the collection's config: worth it once per ingest,
    # not on every query (the manifest has already checked the embedder and dimension).
    mode = RetrievalMode.HYBRID if sparse else RetrievalMode.DENSE
    return QdrantVectorStore(client=client, collection_name=collection, embedding=embeddings,
                             validate_embeddings=validate, validate_collection_config=validate,
                             retrieval_mode=mode, vector_name=DENSE_VECTOR, sparse_vector_name=SPARSE_VECTOR,
                             sparse_embedding=sparse)


def upsert(client: QdrantClient, collection: str, points: Points) -> None:
    """Write points as langchain-qdrant does: the text and metadata as payload, the unnamed dense vector, BM25."""
    from qdrant_client import models

    structs = []
    for at, (point_id, document) in enumerate(zip(points.ids, points.documents, strict=True)):
        vector: dict[str, Any] = {DENSE_VECTOR: [float(x) for x in points.dense[at]]}
        if points.sparse is not None:
            indices, values = points.sparse[at]
            vector[SPARSE_VECTOR] = models.SparseVector(indices=list(indices), values=list(values))
        structs.append(models.PointStruct(id=point_id, vector=vector,
                                          payload={"page_content": document.page_content,
                                                   "metadata": document.metadata}))
    if structs:
        client.upsert(collection, points=structs, wait=True)


def delete_sources(client: QdrantClient, collection: str, sources: list[str]) -> None:
    """Delete every chunk of the given documents."""
    from qdrant_client import models

    if not sources:
        return
    selector = models.FilterSelector(
        filter=models.Filter(
            must=[models.FieldCondition(key="metadata.source", match=models.MatchAny(any=sources))]
        )
    )
    client.delete(collection, points_selector=selector, wait=True)


def delete_stale(client: QdrantClient, collection: str, sources: list[str], keep: set[str]) -> None:
    """Delete the chunks of the given documents whose ids are not in `keep` (their previous version)."""
    from qdrant_client import models

    if not sources:
        return
    condition = models.FieldCondition(key="metadata.source", match=models.MatchAny(any=sources))
    stale: list[models.ExtendedPointId] = []
    offset = None
    while True:
        points, offset = client.scroll(collection, scroll_filter=models.Filter(must=[condition]), limit=1000,
                                       offset=offset, with_payload=False, with_vectors=False)
        stale.extend(p.id for p in points if str(p.id) not in keep)
        if offset is None:
            break
    if stale:
        client.delete(collection, points_selector=models.PointIdsList(points=stale), wait=True)


def holds(client: QdrantClient, collection: str, source: str, documents: list[tuple[str, Document]]) -> bool:
    """Tell whether the page's stored points are exactly these: the same ids, texts and metadata, no others."""
    from qdrant_client import models

    condition = models.FieldCondition(key="metadata.source", match=models.MatchValue(value=source))
    stored: dict[str, Any] = {}
    offset = None
    while len(stored) <= len(documents):  # one point more than expected already says no
        points, offset = client.scroll(collection, scroll_filter=models.Filter(must=[condition]), limit=256,
                                       offset=offset, with_payload=True, with_vectors=False)
        stored.update((str(p.id), p.payload) for p in points)
        if offset is None:
            break
    wanted = {point_id: {"page_content": d.page_content, "metadata": d.metadata} for point_id, d in documents}
    return stored == wanted


def ensure_payload_indexes(client: QdrantClient, collection: str, fields: list[str]) -> None:
    """Index payload fields used in filters, so a server keeps deletes and filtered search fast at scale."""
    from qdrant_client import models

    existing = client.get_collection(collection).payload_schema or {}
    for name in fields:
        if name not in existing:
            client.create_payload_index(collection, name, field_schema=models.PayloadSchemaType.KEYWORD, wait=True)


def stored_sources(client: QdrantClient, collection: str, batch: int = 1000) -> set[str]:
    """Return the source of every stored chunk: what the index really holds, whatever the manifest says."""
    found: set[str] = set()
    offset = None
    while True:
        points, offset = client.scroll(collection, limit=batch, offset=offset, with_payload=["metadata.source"],
                                       with_vectors=False)
        found.update(str(((p.payload or {}).get("metadata") or {}).get("source", "")) for p in points)
        if offset is None:
            return found - {""}


def iter_texts(client: QdrantClient, collection: str, batch: int = 1000) -> Iterator[str]:
    """Yield the indexed text of every chunk in the collection."""
    offset = None
    while True:
        points, offset = client.scroll(
            collection, limit=batch, offset=offset, with_payload=["page_content"], with_vectors=False
        )
        for point in points:
            yield str((point.payload or {}).get("page_content", ""))
        if offset is None:
            return


atexit.register(close_clients)
