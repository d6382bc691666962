"""Which embedder turns text into vectors: Cohere with a key, a bundled local model without one."""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading

from langchain_core.embeddings import Embeddings

from logic.errors import EmbeddingError

LOCAL_MODEL = "local/all-MiniLM-L6-v2"
# The Cohere SDK's own retries (its default), the only retry layer for embeddings.
COHERE_RETRIES = 2
COHERE_MODEL = "cohere/embed-english-v3.0"
_TOKEN = re.compile(r"\w+", re.UNICODE)
_cache: dict[str, Embeddings] = {}
_lock = threading.Lock()


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words hashing embedder for tests: no model, no network."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        for token in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimension
            vector[bucket] += 1.0 if digest[4] % 2 else -1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed chunks."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


def resolve_name(name: str) -> str:
    """Return the embedder to use: the configured one, else Cohere with a key, else local."""
    if name:
        return name
    return COHERE_MODEL if os.environ.get("COHERE_API_KEY") else LOCAL_MODEL


def _build(name: str) -> Embeddings:
    """Create the embedder for a `provider/model` name."""
    provider, _, model = name.partition("/")
    if provider == "local":
        return _local(model)
    if provider == "cohere":
        from langchain_cohere import CohereEmbeddings

        # CohereEmbeddings uses input_type search_document for chunks and search_query for queries.
        # One retry layer: the Cohere SDK already retries 429/408/409/5xx twice with backoff, and
        # langchain-cohere's own tenacity layer (4-10 s waits, retrying even a 401) would multiply
        # that, so it gets a single attempt.
        return CohereEmbeddings(  # type: ignore[call-arg]
            model=model, max_retries=1, request_timeout=30, base_url=os.environ.get("COHERE_BASE_URL") or None
        )
    if provider == "st":
        return _sentence_transformers(model)
    if provider == "hash":
        return HashEmbeddings(int(model or 256))
    raise EmbeddingError(f"unknown embedding provider {provider!r} in {name!r}; use local/, cohere/, st/ or hash/")


def _local(model: str) -> Embeddings:
    """Load the bundled all-MiniLM-L6-v2 (ONNX Runtime) from its packages, never from a hub."""
    if model != "all-MiniLM-L6-v2":
        raise EmbeddingError(f"no bundled local model {model!r}; the bundled one is all-MiniLM-L6-v2")
    from tools import onnx_embedder

    return onnx_embedder.load()


def _sentence_transformers(model: str) -> Embeddings:
    """Load another sentence-transformers model (a folder or a hub name) through the optional torch extra."""
    try:
        from langchain_huggingface import HuggingFaceEmbeddings
    except ImportError as exc:
        raise EmbeddingError(f"st/{model} needs the optional torch extra: pip install 'rag-agent[torch]'") from exc
    embedder: Embeddings = HuggingFaceEmbeddings(model_name=model, model_kwargs={"device": "cpu"},
                                                 encode_kwargs={"normalize_embeddings": True, "batch_size": 64})
    return embedder


def embed_query(embeddings: Embeddings, text: str, timeout: float) -> list[float]:
    """Embed a query; a Cohere call gets `timeout` per attempt (the turn's remaining time, not a fixed 30 s)."""
    if type(embeddings).__name__ != "CohereEmbeddings":  # local embedders make no network call
        return embeddings.embed_query(text)
    from langchain_cohere import CohereEmbeddings

    if not isinstance(embeddings, CohereEmbeddings):
        return embeddings.embed_query(text)
    # CohereEmbeddings.embed_query cannot pass request options; this is its call, with the timeout added.
    response = embeddings.embed_with_retry(
        model=embeddings.model, texts=[text], input_type="search_query", truncate=embeddings.truncate,
        embedding_types=embeddings.embedding_types, request_options={"timeout_in_seconds": timeout},
    )
    by_type = response.dict().get("embeddings") or {}
    for kind in embeddings.embedding_types:
        if by_type.get(kind):
            return [float(x) for x in by_type[kind][0]]
    raise EmbeddingError("the embedding service returned no vector")


def get_embeddings(name: str) -> Embeddings:
    """Return the process-wide embedder for `name`, loading it once."""
    name = resolve_name(name)
    with _lock:
        if name not in _cache:
            try:
                _cache[name] = _build(name)
            except EmbeddingError:
                raise
            except Exception as exc:  # a model that cannot load is an unavailable embedder to the user
                raise EmbeddingError(f"cannot load the embedding model {name} ({type(exc).__name__})") from exc
        return _cache[name]
