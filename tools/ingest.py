"""How documents become an index: chunk, embed in batches, upsert, and record each finished page in the manifest."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from logic import lexical
from logic.errors import IndexMismatchError, InvalidInputError, StorageError
from logic.unicode_text import normalize_text
from tools import lexicon_store, manifest, sources, sparse, upsert, vectorstore
from tools.embedded_store import EmbeddedStore
from tools.folders import read_only
from tools.index_store import IndexStore
from tools.ingest_report import IngestReport, build
from tools.pagecache import chunking, reading_version, remember
from tools.server_store import ServerStore
from tools.settings import get_settings
from tools.upsert import Settings, to_document

log = logging.getLogger(__name__)
WRITE_REMEDY = "free disk space or make the data folder writable, then re-run ingest (finished pages are kept)"
# Where the embedded store stops (docs/configuration.md): past this size ingest suggests a Qdrant server.
# Ingest's own memory is bounded by a batch and a merge block, so the limit is the rebuild of the whole
# snapshot (and its ANN graph) that every change to the index costs.
EMBEDDED_LIMIT = 1_000_000
page_url = sources.page_url  # kept importable from here for existing callers
__all__ = ["IngestReport", "Settings", "ingest", "ingest_folder", "page_url", "to_document"]


def document_hash(url: str, text: str, settings: Settings) -> str:
    """Hash what a page's chunks depend on: its text, its URL, the chunk settings and the code that reads it."""
    key = f"{chunking(settings.chunk_tokens, settings.chunk_overlap)}\n{url}\n{text}"
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


def _open_collection(store: IndexStore, data: dict[str, Any], collection: str, embeddings: Embeddings,
                     embedding_model: str, recreate: bool, retrieval: str | None, data_dir: Path) -> dict[str, Any]:
    """Check the embedder and mode, (re)create the collection if needed, and return its manifest entry."""
    info: dict[str, Any] | None = data["collections"].get(collection)
    if info and info["embedding_model"] != embedding_model and not recreate:
        raise IndexMismatchError(
            f"collection {collection!r} was built with {info['embedding_model']}, not {embedding_model}; "
            "run ingest with --recreate to rebuild it"
        )
    mode = _retrieval_mode(info, collection, retrieval, recreate)
    if mode == vectorstore.HYBRID and info and info.get("documents") and not recreate \
            and info.get("sparse") != sparse.ENCODING:
        # Chunks written by the earlier hand-written encoder hash terms differently from fastembed's BM25.
        raise IndexMismatchError(
            f"collection {collection!r} holds keyword vectors from an earlier BM25 encoder; "
            "run ingest with --recreate to rebuild it")
    dimension = len(embeddings.embed_query("dimension probe"))
    if recreate or not info or not store.exists():
        # A calibration belongs to the index and survives a rebuild of the same collection; without
        # one, the embedder's shipped default applies (manifest.threshold).
        kept: dict[str, Any] = {}
        if info and not recreate:
            kept = {k: info[k] for k in ("threshold", "calibration") if k in info}
        info = {**kept, "documents": {}, "pending": []}
        # The reset is on disk before the collection goes: a run killed in between leaves a manifest
        # that lists nothing, so the next run re-indexes every page instead of calling them unchanged.
        data["collections"][collection] = {**info, "embedding_model": embedding_model, "retrieval": mode}
        manifest.save(data_dir, data)
        store.drop()
    else:
        store.check(info)
    info.update(embedding_model=embedding_model, dimension=dimension, retrieval=mode)
    if mode == vectorstore.HYBRID:
        info["sparse"] = sparse.ENCODING
    store.create(dimension, mode)
    return info


def ingest(found: sources.Collected, *, data_dir: Path, collection: str, embeddings: Embeddings,
           embedding_model: str, recreate: bool = False, source_root: str = "",
           settings: Settings | None = None) -> IngestReport:
    """Index the documents found, embedding only new and changed pages and deleting removed ones.

    Storage failures (a full or read-only disk, a corrupt file) become a StorageError naming the part
    and the file; a page is recorded only once stored, so re-running after the fix completes the index.
    """
    settings, started = settings or Settings(), time.perf_counter()
    # Indexed as a reader sees it: no tag characters, bidi controls or zero-width characters (hidden text
    # that would reach answers, the terminal and the model), and letters in one form (logic/unicode_text.py).
    found = dataclasses.replace(found, docs={s: (url, normalize_text(text)) for s, (url, text) in found.docs.items()})
    if not found.docs and not found.unchanged:
        # Skips too: a robots.txt that refuses the whole site (RFC 9309 on a 5xx) leaves only skipped pages.
        reasons = "; ".join(f"{k}: {v}" for k, v in list({**found.failed, **found.skipped}.items())[:5])
        raise InvalidInputError(f"nothing to ingest: no readable pages{f' ({reasons})' if reasons else ''}")
    try:
        store = open_store(data_dir, collection)
        try:
            report = _ingest(store, found, data_dir, collection, embeddings, embedding_model, recreate, source_root,
                             settings)
        finally:
            store.close()
    except OSError as exc:
        where = str(exc.filename or data_dir)
        part = "index term statistics" if "lexicon" in where else "index"
        reason = read_only(where) or exc.strerror or str(exc)
        raise StorageError(f"cannot write the {part} file {where}: {reason}; {WRITE_REMEDY}") from exc
    report.seconds = time.perf_counter() - started
    return report


def _load_manifest(data_dir: Path, recreate: bool) -> tuple[dict[str, Any], str]:
    """Read the manifest; for --recreate an unreadable one is set aside, so a rebuild always works."""
    try:
        return manifest.load(data_dir), ""
    except StorageError as exc:
        if not recreate:
            raise
        moved = manifest.set_aside(data_dir)
        return {"collections": {}}, f"{exc.message.split(';')[0]}; it was moved to {moved} and rebuilt"


def _kept(found: sources.Collected, known: dict[str, str], present: set[str]) -> dict[str, str]:
    """Return the pages not fetched because unchanged (source -> why) whose chunks the index really holds."""
    return {s: why for s, why in found.unchanged.items() if s in known and s in present}


def _count_held(report: IngestReport, held: list[str], recorded: set[str], info: dict[str, Any]) -> None:
    """Count pages read again but left as stored as unchanged, and say why every page was read after an upgrade."""
    updated = sum(s in recorded for s in held)
    report.updated -= updated
    report.added -= len(held) - updated
    report.unchanged += len(held)
    report.changed -= len(held)
    if info.get("reading") != reading_version() and held:
        report.notes.append(f"this version of rag-agent reads pages differently from the one that built the index, "
                            f"so every page was read again: {len(held)} came out as stored, "
                            f"{report.updated} changed")
    info["reading"] = reading_version()


def open_store(data_dir: Path, collection: str) -> IndexStore:
    """Return the store ingest writes to: the Qdrant server with QDRANT_URL, else the embedded one."""
    if get_settings().qdrant_url:
        return ServerStore(data_dir, collection)
    return EmbeddedStore(data_dir, collection)


def _ingest(store: IndexStore, found: sources.Collected, data_dir: Path, collection: str, embeddings: Embeddings,
            embedding_model: str, recreate: bool, source_root: str, settings: Settings) -> IngestReport:
    """Reconcile the index with the documents found (see `ingest`)."""
    data, recovered = _load_manifest(data_dir, recreate)
    info = _open_collection(store, data, collection, embeddings, embedding_model, recreate, settings.retrieval,
                            data_dir)
    data["collections"][collection] = info
    known: dict[str, str] = info["documents"]
    # What the index really holds, which a run killed mid-write can leave different from the manifest:
    # pages stored but never recorded, or recorded but no longer stored (a collection dropped by --recreate).
    stored = store.stored_sources()
    # Pages a previous run was writing when it stopped may hold partial chunks: clean them like updates.
    dirty = set(known) | set(info.get("pending", [])) | stored
    hashes = {s: document_hash(url, text, settings) for s, (url, text) in found.docs.items()}
    empty = set(info.get("empty", []))  # pages with no chunks: nothing stored is expected of them
    changed = [s for s in found.docs if known.get(s) != hashes[s] or (s not in stored and s not in empty)]
    kept = _kept(found, known, stored | empty)
    # A page that failed to fetch keeps its chunks; only a complete listing (or a 404) proves a page is gone.
    removed = sorted(s for s in dirty if s not in found.docs and s not in kept
                     and (s in found.gone or (found.complete and s not in found.failed)))
    report = build(found, known, changed, removed, kept, recovered)
    store.delete_sources(removed)
    for source in removed:
        known.pop(source, None)
        info.get("sections", {}).pop(source, None)
    info.update(source_root=source_root, pending=[], updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    touched = bool(changed or removed or "version" not in info)
    if touched:  # before and after the writes, so nothing read mid-ingest is kept under the final version
        manifest.new_version(info)
    manifest.save(data_dir, data)
    recorded = set(known)  # before the writes record the changed pages
    report.embedded, held = upsert.write(store, collection, embeddings, found, changed, hashes, dirty, data,
                                         data_dir, settings)
    _count_held(report, held, recorded, info)
    # Pages read again whose chunks came out as stored change nothing: no new snapshot for them.
    touched = bool(len(held) < len(changed) or removed or "version" not in info)
    if touched:
        manifest.new_version(info)
    store.finish(info, touched, embeddings)  # the embedded store publishes its new snapshot to readers here
    report.chunks, report.retrieval = store.count(), manifest.retrieval_mode(info)
    # Term statistics cover the whole collection, so they are recounted after every change.
    lexicon_store.save(data_dir, collection, lexical.build(store.iter_texts()))
    info.update(chunks=report.chunks, updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    manifest.save(data_dir, data)
    # After the manifest: a page's version is only ever remembered once its chunks are recorded as stored.
    remember(data_dir, collection, chunking(settings.chunk_tokens, settings.chunk_overlap), found.seen, set(known))
    if report.chunks > EMBEDDED_LIMIT and not get_settings().qdrant_url:
        report.warnings.append(
            f"{report.chunks} chunks is past the {EMBEDDED_LIMIT:,} the embedded index was measured at; run a Qdrant "
            "server (docker run -p 6333:6333 qdrant/qdrant), set QDRANT_URL=http://localhost:6333 and re-ingest")
        log.warning(report.warnings[-1])
    return report
