"""retrieve: embed the standalone query, fetch dense (or hybrid) candidates and keep the best top-k after re-ranking."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context, resolve_context
from graph.state import Chunk, State
from nodes.budget import call_timeout, remaining
from tools import lexical, manifest, ranking, vectorstore
from tools.embeddings import COHERE_RETRIES, embed_query, get_embeddings, resolve_name
from tools.errors import AgentError, EmbeddingError


def to_chunk(metadata: dict[str, Any], score: float) -> Chunk:
    """Turn a stored chunk's metadata into the state's Chunk."""
    return {
        "chunk_id": str(metadata.get("chunk_id", "")),
        "source": str(metadata.get("source", "")),
        "source_url": str(metadata.get("source_url", "")),
        "title": str(metadata.get("title", "")),
        "heading_hierarchy": list(metadata.get("heading_hierarchy") or []),
        "score": round(score, 4),
        "text": str(metadata.get("text", "")),
    }


def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Search the collection; failures are recorded for error_handler, not raised."""
    ctx = resolve_context(runtime.context)
    name = resolve_name(ctx.embedding_model)
    try:
        info = manifest.collection_info(ctx.data_dir, ctx.collection, name)
        embeddings = get_embeddings(name)
        timeout = call_timeout(ctx, COHERE_RETRIES + 1)  # out of time: no further network call
        try:
            vector = embed_query(embeddings, state["retrieval_query"], timeout)
        except Exception as exc:  # provider SDKs raise many types; all mean "embedding unavailable"
            raise EmbeddingError(f"the embedding model {name} failed ({type(exc).__name__})") from exc
        client = vectorstore.open_client(ctx.data_dir)
        remaining(ctx)
        hits = vectorstore.search(client, ctx.collection, embeddings, vector, ranking.candidates_for(ctx.top_k),
                                  mode=manifest.retrieval_mode(info), text=state["retrieval_query"])
        terms = lexical.load(ctx.data_dir, ctx.collection)
        if terms is None:  # an index built before term statistics existed: count them once now
            terms = lexical.build(vectorstore.iter_texts(client, ctx.collection))
            lexical.save(ctx.data_dir, ctx.collection, terms)
    except AgentError as exc:
        return {"embedding_model": name, "error": {"code": exc.code, "message": exc.message, "node": "retrieve"}}
    chunks, confidence = ranking.rank(
        state["retrieval_query"], [to_chunk(doc.metadata, score) for doc, score in hits], terms, ctx.top_k
    )
    threshold = ctx.score_threshold if ctx.score_threshold is not None else manifest.threshold(info)
    return {
        "retrieved": chunks,
        "top_score": confidence,
        "threshold": threshold,
        "embedding_model": name,
    }
