"""How documents become an index: chunk, embed in batches, upsert, and record each finished page in the manifest."""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from qdrant_client import QdrantClient
from tqdm import tqdm

from logic import lexical
from logic.chunking import Passage, chunk_markdown
from logic.errors import IndexMismatchError, InvalidInputError
from tools import lexicon_store, manifest, sources, sparse, vectorstore
from tools.settings import get_settings

log = logging.getLogger(__name__)
LOCAL_MODE_LIMIT = 20_000  # past this, embedded Qdrant's full scans make filters and deletes slow
_ID_NAMESPACE = uuid.UUID("6f1c2a52-52f4-4d0e-9a57-0d6c2d1b7a10")
page_url = sources.page_url  # kept importable from here for existing callers


@dataclass
class IngestReport:
    """What a run changed, and what it could not read."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    embedded: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    retrieval: str = ""


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
        "token_count": chunk.token_count,
        "sha256": chunk.sha256,
        "text": chunk.body,
    }
    return point_id, Document(page_content=chunk.embedding_text(), metadata=metadata)


def document_hash(url: str, text: str, settings: Settings) -> str:
    """Hash what a page's chunks depend on: its text, its URL and the chunking settings."""
    key = f"{settings.chunk_tokens}/{settings.chunk_overlap}\n{url}\n{text}"
    return hashlib.sha256(key.encode()).hexdigest()


def ingest_folder(root: Path, *, data_dir: Path, collection: str, embeddings: Embeddings, embedding_model: str,
                  base_url: str = "", recreate: bool = False, chunk_tokens: int = 200, batch_size: int = 64,
                  progress: bool = True, retrieval: str | None = None) -> IngestReport:
    """Index every page under `root`, re-embedding only pages whose content changed."""
    if not root.exists():
        raise InvalidInputError(f"nothing to ingest: {root} does not exist")
    found = sources.from_folder(root, base_url)
    return ingest(found, data_dir=data_dir, collection=collection, embeddings=embeddings,
                  embedding_model=embedding_model, recreate=recreate, source_root=str(root.resolve()),
                  settings=Settings(chunk_tokens=chunk_tokens, batch_size=batch_size, progress=progress,
                                    retrieval=retrieval))


def _retrieval_mode(info: dict[str, Any] | None, collection: str, wanted: str | None, recreate: bool) -> str:
    """Return the mode to build with: the one asked for, else the collection's own, else the default."""
    if wanted is not None and wanted not in manifest.RETRIEVAL_MODES:
        raise InvalidInputError(f"retrieval must be one of {', '.join(manifest.RETRIEVAL_MODES)}, not {wanted!r}")
    current = manifest.retrieval_mode(info) if info else None
    if current and wanted and wanted != current and not recreate:
        # The sparse vectors are part of the collection's schema and of every stored point.
        raise IndexMismatchError(
            f"collection {collection!r} uses {current} retrieval, not {wanted}; "
            f"run ingest with --recreate --retrieval {wanted} to rebuild it"
        )
    return wanted or current or manifest.DEFAULT_RETRIEVAL


def _open_collection(client: QdrantClient, data: dict[str, Any], collection: str, embeddings: Embeddings,
                     embedding_model: str, recreate: bool, retrieval: str | None = None) -> dict[str, Any]:
    """Check the embedder and mode, (re)create the collection if needed, and return its manifest entry."""
    info: dict[str, Any] | None = data["collections"].get(collection)
    if info and info["embedding_model"] != embedding_model and not recreate:
        raise IndexMismatchError(
            f"collection {collection!r} was built with {info['embedding_model']}, not {embedding_model}; "
            "run ingest with --recreate to rebuild it"
        )
    mode = _retrieval_mode(info, collection, retrieval, recreate)
    dimension = len(embeddings.embed_query("dimension probe"))
    if recreate or not info or not client.collection_exists(collection):
        if client.collection_exists(collection):
            client.delete_collection(collection)
        # A calibration belongs to the index and survives a rebuild of the same collection; without
        # one, the embedder's shipped default applies (manifest.threshold).
        kept: dict[str, Any] = {}
        if info and not recreate:
            kept = {k: info[k] for k in ("threshold", "calibration") if k in info}
        info = {**kept, "documents": {}, "pending": []}
    info.update(embedding_model=embedding_model, dimension=dimension, retrieval=mode)
    vectorstore.ensure_collection(client, collection, dimension, mode=mode)
    vectorstore.fast_local_writes(client, collection)
    if get_settings().qdrant_url:
        vectorstore.ensure_payload_indexes(client, collection, ["metadata.source", "metadata.module_name"])
    return info


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


def ingest(found: sources.Collected, *, data_dir: Path, collection: str, embeddings: Embeddings,
           embedding_model: str, recreate: bool = False, source_root: str = "",
           settings: Settings | None = None) -> IngestReport:
    """Index the documents found, embedding only new and changed pages and deleting removed ones."""
    settings, started = settings or Settings(), time.perf_counter()
    if not found.docs:
        reasons = "; ".join(f"{k}: {v}" for k, v in list(found.failed.items())[:5])
        raise InvalidInputError(f"nothing to ingest: no readable pages{f' ({reasons})' if reasons else ''}")
    client = vectorstore.open_client(data_dir)
    data = manifest.load(data_dir)
    info = _open_collection(client, data, collection, embeddings, embedding_model, recreate, settings.retrieval)
    data["collections"][collection] = info
    known: dict[str, str] = info["documents"]
    # Pages a previous run was writing when it stopped may hold partial chunks: clean them like updates.
    dirty = set(known) | set(info.get("pending", []))
    hashes = {s: document_hash(url, text, settings) for s, (url, text) in found.docs.items()}
    changed = [s for s in found.docs if known.get(s) != hashes[s]]
    # A page that failed to fetch keeps its chunks; only a complete listing (or a 404) proves a page is gone.
    removed = [s for s in known
               if s not in found.docs and (s in found.gone or (found.complete and s not in found.failed))]
    report = IngestReport(added=sum(s not in known for s in changed), updated=sum(s in known for s in changed),
                          removed=len(removed), unchanged=len(found.docs) - len(changed),
                          failed=dict(found.failed), skipped=dict(found.skipped))
    vectorstore.delete_sources(client, collection, removed)
    for source in removed:
        known.pop(source, None)
        info.get("sections", {}).pop(source, None)
    info.update(source_root=source_root, pending=[], updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    touched = bool(changed or removed or "version" not in info)
    if touched:  # before and after the writes, so nothing read mid-ingest is kept under the final version
        manifest.new_version(info)
    manifest.save(data_dir, data)
    report.embedded = _write(client, collection, embeddings, found, changed, hashes, dirty, data, data_dir, settings)
    if touched:
        manifest.new_version(info)
    report.chunks, report.retrieval = int(client.count(collection).count), manifest.retrieval_mode(info)
    # Term statistics cover the whole collection, so they are recounted after every change.
    lexicon_store.save(data_dir, collection, lexical.build(vectorstore.iter_texts(client, collection)))
    info.update(chunks=report.chunks, updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    manifest.save(data_dir, data)
    if report.chunks > LOCAL_MODE_LIMIT and not get_settings().qdrant_url:
        report.warnings.append(
            f"{report.chunks} chunks is past what local mode handles well (~{LOCAL_MODE_LIMIT}); run a Qdrant "
            "server (docker run -p 6333:6333 qdrant/qdrant), set QDRANT_URL=http://localhost:6333 and re-ingest")
        log.warning(report.warnings[-1])
    report.seconds = time.perf_counter() - started
    return report


def _sparse_encoder(info: dict[str, Any], chunks: dict[str, list[Passage]]) -> sparse.BM25Encoder | None:
    """Return a hybrid collection's BM25 encoder, measuring its average chunk length on the first write."""
    if manifest.retrieval_mode(info) != vectorstore.HYBRID:
        return None
    # Fixed once per collection, so every chunk, old or new, is normalised against the same length.
    if not info.get("bm25_average_length") and chunks:
        texts = (c.embedding_text() for page in chunks.values() for c in page)
        info["bm25_average_length"] = round(sparse.average_length(texts), 2)
    return sparse.BM25Encoder(float(info.get("bm25_average_length") or 1.0))


def _write(client: QdrantClient, collection: str, embeddings: Embeddings, found: sources.Collected,
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
            done_docs += len(batch)
            bar.update(sum(len(chunks[s]) for s in batch))
            rate = done_docs / max(time.perf_counter() - started, 1e-9)
            bar.set_postfix_str(f"{done_docs}/{len(changed)} docs, {rate:.1f} docs/s")
    info["pending"] = []
    manifest.save(data_dir, data)
    return total
