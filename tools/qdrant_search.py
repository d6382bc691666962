"""Search in Qdrant itself: the QDRANT_URL server path (and a check against the embedded snapshot in tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from logic.errors import RetrievalError
from logic.filters import Scope
from tools import sparse as bm25
from tools import vectorstore
from tools.filters import to_qdrant

# qdrant_client is imported by the functions that talk to Qdrant: a turn on the embedded index never does.
if TYPE_CHECKING:
    from langchain_qdrant import SparseVector
    from qdrant_client import QdrantClient, models


def search(
    client: QdrantClient, collection: str, embeddings: Embeddings, vector: list[float], k: int, *,
    mode: str = vectorstore.DENSE, text: str = "", scope: Scope | None = None,
) -> list[tuple[Document, float]]:
    """Return k chunks for an already-embedded query, with cosine scores, within `scope` (None: everywhere).

    Hybrid mode also matches `text`'s terms by keyword.
    """
    query_filter = to_qdrant(scope)
    try:
        keywords = bm25.encoder().embed_query(text) if mode == vectorstore.HYBRID else None
        if keywords and keywords.indices:  # a question of stopwords only has nothing to match by keyword
            return _hybrid(client, collection, vector, keywords, k, query_filter)
        vstore = vectorstore.store(client, collection, embeddings, validate=False)
        return vstore.similarity_search_with_score_by_vector(vector, k=k, filter=query_filter)
    except Exception as exc:  # any client or transport failure is a retrieval outage to the user
        raise RetrievalError(f"the vector store failed ({type(exc).__name__})") from exc


def _hybrid(
    client: QdrantClient, collection: str, vector: list[float], keywords: SparseVector, k: int,
    query_filter: models.Filter | None = None,
) -> list[tuple[Document, float]]:
    """Pick k candidates by RRF of dense and BM25 neighbours, then score them by their dense cosine."""
    from qdrant_client import models

    # Not QdrantVectorStore's HYBRID search: it re-embeds the query (retrieve already did) and returns
    # the RRF score, a rank-based number the gate cannot be calibrated on. The outer dense query
    # re-scores the fused candidates in the same request, so each comes back with its cosine.
    fused = models.Prefetch(
        prefetch=[
            models.Prefetch(query=vector, using=vectorstore.DENSE_VECTOR, limit=k, filter=query_filter),
            models.Prefetch(query=models.SparseVector(indices=keywords.indices, values=keywords.values),
                            using=vectorstore.SPARSE_VECTOR, limit=k, filter=query_filter),
        ],
        query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k,
    )
    points = client.query_points(collection, prefetch=fused, query=vector, using=vectorstore.DENSE_VECTOR, limit=k,
                                 query_filter=query_filter, with_payload=True, with_vectors=False).points
    return [(_document(p), p.score) for p in points]


def _document(point: models.ScoredPoint) -> Document:
    """Turn a returned point into the Document the LangChain store would have built."""
    payload = point.payload or {}
    metadata = {**(payload.get("metadata") or {}), "_id": point.id}
    return Document(page_content=str(payload.get("page_content", "")), metadata=metadata)


def chunks_at(client: QdrantClient, collection: str,
              places: list[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the stored metadata of the chunk at each (page, place on the page), where the collection holds one."""
    from qdrant_client import models

    def at(source: str, index: int) -> models.Filter:
        return models.Filter(must=[
            models.FieldCondition(key="metadata.source", match=models.MatchValue(value=source)),
            models.FieldCondition(key="metadata.chunk_index", match=models.MatchValue(value=index))])

    try:  # one request for all of them: a turn asks for a few
        points, _ = client.scroll(collection, scroll_filter=models.Filter(should=[at(*p) for p in places]),
                                  limit=len(places), with_payload=True)
    except Exception as exc:  # any client or transport failure is a retrieval outage to the user
        raise RetrievalError(f"the vector store failed ({type(exc).__name__})") from exc
    found = {}
    for point in points:
        metadata = (point.payload or {}).get("metadata") or {}
        place = (str(metadata.get("source")), metadata.get("chunk_index"))
        if place in places:
            found[(place[0], int(place[1] or 0))] = dict(metadata)
    return found
