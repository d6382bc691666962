"""How a folder of Markdown becomes an index: chunk, embed in batches, upsert, record in the manifest."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from tools import lexical, manifest, vectorstore
from tools.chunking import Chunk, chunk_markdown, split_front_matter
from tools.errors import IndexMismatchError, InvalidInputError

log = logging.getLogger(__name__)
SUFFIXES = {".md", ".mdx"}
_ID_NAMESPACE = uuid.UUID("6f1c2a52-52f4-4d0e-9a57-0d6c2d1b7a10")


@dataclass
class IngestReport:
    """What a run changed."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0


def iter_documents(root: Path) -> Iterator[tuple[str, str]]:
    """Yield (POSIX path relative to root, text) for every Markdown file under root, sorted."""
    if root.is_file():
        yield root.name, root.read_text(encoding="utf-8", errors="replace")
        return
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
        if not any(part.startswith(".") for part in path.relative_to(root).parts):
            yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8", errors="replace")


def page_url(source: str, text: str, base_url: str) -> str:
    """Return the page's URL as Docusaurus builds it (front matter slug, index pages), or its path."""
    front, _ = split_front_matter(text)
    stem = source.rsplit(".", 1)[0]
    slug = str(front.get("slug") or "")
    if slug:
        path = slug.lstrip("/") if slug.startswith("/") else f"{stem.rsplit('/', 1)[0]}/{slug}".lstrip("/")
    else:
        path = stem[: -len("index")].rstrip("/") if stem == "index" or stem.endswith("/index") else stem
    return f"{base_url.rstrip('/')}/{path}" if base_url else source


def to_document(chunk: Chunk, url: str) -> tuple[str, Document]:
    """Return the chunk's deterministic point id and the document stored for it."""
    point_id = str(uuid.uuid5(_ID_NAMESPACE, f"{chunk.source}\n{chunk.chunk_index}\n{chunk.sha256}"))
    metadata = {
        "chunk_id": point_id,
        "source": chunk.source,
        "source_url": f"{url}#{chunk.anchor}" if chunk.anchor else url,
        "title": chunk.title,
        "heading_hierarchy": chunk.heading_hierarchy,
        "anchor": chunk.anchor,
        "chunk_index": chunk.chunk_index,
        "token_count": chunk.token_count,
        "sha256": chunk.sha256,
        "text": chunk.body,
    }
    return point_id, Document(page_content=chunk.embedding_text(), metadata=metadata)


def ingest_folder(
    root: Path,
    *,
    data_dir: Path,
    collection: str,
    embeddings: Embeddings,
    embedding_model: str,
    base_url: str = "",
    recreate: bool = False,
    chunk_tokens: int = 200,
    batch_size: int = 64,
    progress: bool = True,
) -> IngestReport:
    """Index every Markdown page under `root`, re-embedding only pages whose content changed."""
    if not root.exists():
        raise InvalidInputError(f"nothing to ingest: {root} does not exist")
    docs = dict(iter_documents(root))
    if not docs:
        raise InvalidInputError(f"nothing to ingest: no .md or .mdx files under {root}")
    client = vectorstore.open_client(data_dir)
    data = manifest.load(data_dir)
    info = data["collections"].get(collection)
    if info and info["embedding_model"] != embedding_model and not recreate:
        raise IndexMismatchError(
            f"collection {collection!r} was built with {info['embedding_model']}, not {embedding_model}; "
            "run ingest with --recreate to rebuild it"
        )
    if recreate or not info:
        if client.collection_exists(collection):
            client.delete_collection(collection)
        info = None
    dimension = len(embeddings.embed_query("dimension probe"))
    vectorstore.ensure_collection(client, collection, dimension)
    known: dict[str, str] = dict(info["documents"]) if info else {}
    hashes = {source: hashlib.sha256(text.encode()).hexdigest() for source, text in docs.items()}
    changed = [s for s in docs if known.get(s) != hashes[s]]
    removed = [s for s in known if s not in docs]
    report = IngestReport(
        added=sum(s not in known for s in changed),
        updated=sum(s in known for s in changed),
        removed=len(removed),
        unchanged=len(docs) - len(changed),
    )
    vectorstore.delete_sources(client, collection, removed + [s for s in changed if s in known])
    vstore = vectorstore.store(client, collection, embeddings)
    pairs = [
        to_document(chunk, page_url(source, docs[source], base_url))
        for source in changed
        for chunk in chunk_markdown(docs[source], source, chunk_tokens)
    ]
    with tqdm(total=len(pairs), unit="chunk", desc="embedding", disable=not progress) as bar:
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start : start + batch_size]
            vstore.add_documents([doc for _, doc in batch], ids=[pid for pid, _ in batch])
            bar.update(len(batch))
    report.chunks = int(client.count(collection).count)
    # Term statistics cover the whole collection, so they are recounted after every change.
    lexical.save(data_dir, collection, lexical.build(vectorstore.iter_texts(client, collection)))
    data["collections"][collection] = {
        "embedding_model": embedding_model,
        "dimension": dimension,
        **{k: info[k] for k in ("threshold", "calibration") if info and k in info and info.get("calibration")},
        "documents": hashes,
        "chunks": report.chunks,
        "source_root": str(root.resolve()),
        "updated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    manifest.save(data_dir, data)
    return report
