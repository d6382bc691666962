"""Writing changed pages: chunk, embed in batches, upsert, and record each page in the manifest once stored."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from logic.chunking import Passage, chunk_markdown
from tools import manifest, sources, sparse, vectorstore
from tools.index_store import IndexStore, Points

# Seconds between manifest saves on the embedded store: pages stored since the last save are embedded
# again after a crash, which costs less than rewriting the whole manifest after every batch. A big
# manifest (0.5 s to write at 1M chunks) is saved at most once per SAVE_SHARE of its own write time.
SAVE_EVERY = 5.0
SAVE_SHARE = 40
# Chunks the BM25 average length is measured on (all of them in a smaller first ingest).
LENGTH_SAMPLE = 20_000
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


Page = tuple[str, list[Passage]]


def _batches(pages: Iterable[Page], size: int) -> Iterator[list[Page]]:
    """Group chunked pages into batches of about `size` chunks; a page is never split across batches."""
    batch: list[Page] = []
    count = 0
    for page in pages:
        batch.append(page)
        count += len(page[1])
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch


def _sparse_encoder(info: dict[str, Any], pages: Iterator[Page]) -> tuple[Any, list[Page]]:
    """Return a hybrid collection's BM25 encoder and the pages chunked ahead to measure its average length.

    The length is measured on the first write, on up to LENGTH_SAMPLE chunks, and fixed for the
    collection, so every chunk, old or new, is normalised against the same length.
    """
    if manifest.retrieval_mode(info) != vectorstore.HYBRID:
        return None, []
    ahead: list[Page] = []
    if not info.get("bm25_average_length"):
        count = 0
        for page in pages:
            ahead.append(page)
            count += len(page[1])
            if count >= LENGTH_SAMPLE:
                break
        if ahead:  # nothing to write: measured on the first write that has pages
            info["bm25_average_length"] = round(sparse.average_length(c.embedding_text() for _, p in ahead
                                                                      for c in p), 2)
    return sparse.encoder(float(info.get("bm25_average_length") or 1.0)), ahead


def _points(pairs: list[tuple[str, Document]], embeddings: Embeddings, encoder: Any, size: int) -> Points:
    """Embed a batch's chunks (and encode them for BM25 in a hybrid collection)."""
    texts = [d.page_content for _, d in pairs]
    dense = [v for first in range(0, len(texts), size) for v in embeddings.embed_documents(texts[first:first + size])]
    keywords = None
    if encoder is not None:
        keywords = [(list(v.indices), list(v.values)) for v in encoder.embed_documents(texts)]
    return Points([i for i, _ in pairs], [d for _, d in pairs], np.asarray(dense, dtype=np.float32), keywords)


def write(store: IndexStore, collection: str, embeddings: Embeddings, found: sources.Collected,
          changed: list[str], hashes: dict[str, str], dirty: set[str], data: dict[str, Any], data_dir: Path,
          settings: Settings) -> tuple[int, list[str]]:
    """Embed and store changed pages batch by batch, recording each batch in the manifest once it is stored.

    Pages are chunked as their batch comes, so memory holds a batch's chunks, not every changed page's.
    Returns the chunks embedded and the pages left as they were: their chunks came out exactly as stored.
    """
    info = data["collections"][collection]
    held: list[Page] = []

    def to_write() -> Iterator[Page]:
        for source in changed:
            chunks = chunk_markdown(found.docs[source][1], source, settings.chunk_tokens, settings.chunk_overlap)
            # A page read again whose chunks did not change (the reading code was upgraded, or only what the hash
            # covers besides the chunks moved) keeps its stored chunks: no embedding, no rewrite.
            if source in dirty and store.holds(source, [to_document(c, found.docs[source][0]) for c in chunks]):
                held.append((source, chunks))
            else:
                yield source, chunks

    pages = to_write()
    encoder, ahead = _sparse_encoder(info, pages)
    total, started, saved, interval, counted = 0, time.perf_counter(), time.monotonic(), SAVE_EVERY, 0
    with tqdm(total=len(changed), unit="page", desc="embedding", disable=not settings.progress) as bar:
        for batch in _batches(itertools.chain(ahead, pages), settings.batch_size):
            names = [s for s, _ in batch]
            if not store.atomic_batches:  # a batch the server may store in part: cleaned like an update next run
                info["pending"] = names
                manifest.save(data_dir, data)
            try:
                pairs = [to_document(c, found.docs[s][0]) for s, chunks in batch for c in chunks]
                store.write(names, _points(pairs, embeddings, encoder, settings.batch_size),
                            [s for s in names if s in dirty])
            except BaseException:
                if store.atomic_batches:  # an interrupted run (Ctrl-C, an error) keeps the pages it finished
                    store.flush()
                    manifest.save(data_dir, data)
                raise
            _record(info, batch, hashes)
            if store.atomic_batches and time.monotonic() - saved >= interval:
                # The manifest is rewritten whole: once a batch it would cost more than the batch at 1M chunks.
                store.flush()  # durable before the manifest records the pages
                before = time.monotonic()
                manifest.save(data_dir, data)
                saved = time.monotonic()
                interval = max(SAVE_EVERY, SAVE_SHARE * (saved - before))
            total += len(pairs)
            bar.update(len(batch) + len(held) - counted)  # pages left as stored count as done
            counted = len(held)
            bar.set_postfix_str(f"{total} chunks, {total / max(time.perf_counter() - started, 1e-9):.1f} chunks/s")
        bar.update(len(held) - counted)
    store.flush()
    _record(info, held, hashes)
    info["pending"] = []
    manifest.save(data_dir, data)
    return total, [source for source, _ in held]


def _record(info: dict[str, Any], batch: list[Page], hashes: dict[str, str]) -> None:
    """Record a stored batch's pages in the manifest entry: their hashes, headings and emptiness."""
    for source, chunks in batch:
        info["documents"][source] = hashes[source]
        # The headings a `section` filter can name, checked before any search.
        info.setdefault("sections", {})[source] = sorted({h for c in chunks for h in c.heading_hierarchy})
        empty = set(info.get("empty", [])) - {source} | ({source} if not chunks else set())
        info["empty"] = sorted(empty)
