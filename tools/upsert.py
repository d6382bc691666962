"""Writing changed pages: chunk, embed in batches, upsert, and record each page in the manifest once stored."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_qdrant import SparseEmbeddings
from qdrant_client import QdrantClient
from tqdm import tqdm

from logic.chunking import Passage, chunk_markdown
from tools import manifest, sources, sparse, vectorstore

_ID_NAMESPACE = uuid.UUID("6f1c2a52-52f4-4d0e-9a57-0d6c2d1b7a10")


@dataclass
class Settings:
    """How documents are chunked and written."""

    chunk_tokens: int = 200
    chunk_overlap: int = 0
    batch_size: int = 64
    progress: bool = True
    # "dense" or "hybrid"; None keeps an existing collection's mode and gives a new one the default.
    retrieval: str | None = None


def to_document(chunk: Passage, url: str) -> tuple[str, Document]:
    """Return the chunk's deterministic point id and the document stored for it."""
    point_id = str(uuid.uuid5(_ID_NAMESPACE, f"{chunk.source}\n{chunk.chunk_index}\n{chunk.sha256}"))
    folders = chunk.source.split("/")[:-1]
    metadata = {
        "chunk_id": point_id,
        "source": chunk.source,
        "source_url": f"{url}#{chunk.anchor}" if chunk.anchor else url,
        "title": chunk.title,
        "heading_hierarchy": chunk.heading_hierarchy,
        "anchor": chunk.anchor,
        # The first folder is the course module / docs section, the path without extension the chapter.
        "module_name": folders[0] if folders else "",
        "chapter_id": chunk.source.rsplit(".", 1)[0] if "." in chunk.source.rsplit("/", 1)[-1] else chunk.source,
        "chunk_index": chunk.chunk_index,
        "page_chunks": chunk.page_chunks,
        "token_count": chunk.token_count,
        "sha256": chunk.sha256,
        "text": chunk.body,
    }
    return point_id, Document(page_content=chunk.embedding_text(), metadata=metadata)


def _batches(changed: list[str], chunks: dict[str, list[Passage]], size: int) -> Iterator[list[str]]:
    """Group pages into batches of about `size` chunks; a page is never split across batches."""
    batch: list[str] = []
    count = 0
    for source in changed:
        batch.append(source)
        count += len(chunks[source])
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch


def _sparse_encoder(info: dict[str, Any], chunks: dict[str, list[Passage]]) -> SparseEmbeddings | None:
    """Return a hybrid collection's BM25 encoder, measuring its average chunk length on the first write."""
    if manifest.retrieval_mode(info) != vectorstore.HYBRID:
        return None
    # Fixed once per collection, so every chunk, old or new, is normalised against the same length.
    if not info.get("bm25_average_length") and chunks:
        texts = (c.embedding_text() for page in chunks.values() for c in page)
        info["bm25_average_length"] = round(sparse.average_length(texts), 2)
    return sparse.encoder(float(info.get("bm25_average_length") or 1.0))


def write(client: QdrantClient, collection: str, embeddings: Embeddings, found: sources.Collected,
           changed: list[str], hashes: dict[str, str], dirty: set[str], data: dict[str, Any], data_dir: Path,
           settings: Settings) -> int:
    """Embed and upsert changed pages batch by batch, recording each batch in the manifest once it is stored."""
    info = data["collections"][collection]
    chunks = {s: chunk_markdown(found.docs[s][1], s, settings.chunk_tokens, settings.chunk_overlap) for s in changed}
    vstore = vectorstore.store(client, collection, embeddings, validate=False, sparse=_sparse_encoder(info, chunks))
    total = sum(len(c) for c in chunks.values())
    done_docs, started = 0, time.perf_counter()
    with tqdm(total=total, unit="chunk", desc="embedding", disable=not settings.progress) as bar:
        for batch in _batches(changed, chunks, settings.batch_size):
            info["pending"] = batch
            manifest.save(data_dir, data)
            pairs = [to_document(c, found.docs[s][0]) for s in batch for c in chunks[s]]
            if pairs:
                vstore.add_documents([d for _, d in pairs], ids=[i for i, _ in pairs], batch_size=settings.batch_size)
            # New chunks are in before old ones go, so a changed page is never missing from the index.
            vectorstore.delete_stale(client, collection, [s for s in batch if s in dirty], {i for i, _ in pairs})
            for source in batch:
                info["documents"][source] = hashes[source]
                # The headings a `section` filter can name, checked before any search.
                headings = {h for c in chunks[source] for h in c.heading_hierarchy}
                info.setdefault("sections", {})[source] = sorted(headings)
                empty = set(info.get("empty", [])) - {source} | ({source} if not chunks[source] else set())
                info["empty"] = sorted(empty)
            done_docs += len(batch)
            bar.update(sum(len(chunks[s]) for s in batch))
            rate = done_docs / max(time.perf_counter() - started, 1e-9)
            bar.set_postfix_str(f"{done_docs}/{len(changed)} docs, {rate:.1f} docs/s")
    info["pending"] = []
    manifest.save(data_dir, data)
    return total
