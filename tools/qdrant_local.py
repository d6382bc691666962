"""Opening Qdrant: a server by URL, or local mode on disk with clear errors for a held lock or a corrupt file."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from logic.errors import StorageError
from tools import folders
from tools.settings import get_settings

if TYPE_CHECKING:  # imported by connect(): a turn on the embedded index never opens Qdrant
    from qdrant_client import QdrantClient


def connect(url: str | None, path: Path, recreate: str = "") -> QdrantClient:
    """Create a client, turning a held lock, an unwritable folder or a corrupt file into a clear error."""
    from qdrant_client import QdrantClient

    if url:
        return QdrantClient(url=url, api_key=get_settings().qdrant_api_key.get_secret_value() or None, timeout=10)
    try:
        path.mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StorageError(
                f"the index at {path} is open in another process; stop it, or set QDRANT_URL "
                "to share one Qdrant server between processes"
            ) from exc
        raise
    except OSError as exc:
        reason = folders.read_only(path) or exc.strerror or str(exc)
        raise StorageError(f"cannot open the index folder {path}: {reason}") from exc
    except Exception as exc:  # local mode reads every stored point at open: sqlite, pickle or JSON errors
        if isinstance(exc, sqlite3.OperationalError) or not _writable(path):  # not damaged: out of reach
            reason = folders.read_only(path)  # sqlite says only "unable to open database file"
            raise StorageError(f"cannot open the index storage in {path}: {reason or exc}; make the data folder "
                               "writable and check free disk space, then retry") from exc
        bad = unreadable_file(path)
        if recreate and bad is not None and (bad.name == "meta.json" or bad.parent.name == recreate):
            bad.replace(bad.with_name(bad.name + ".corrupt"))  # kept for inspection, out of Qdrant's way
            return connect(url, path)
        collection = "" if bad is None or bad.name == "meta.json" else f" --collection {bad.parent.name}"
        raise StorageError(
            f"the index storage file {bad or path} is unreadable ({type(exc).__name__}: {exc}); rebuild the "
            f"index with `rag-agent{collection} ingest PATH --recreate`"
        ) from exc


def _writable(path: Path) -> bool:
    """Tell whether the index folder and its files can be written (False on a read-only disk)."""
    return all(os.access(p, os.W_OK) for p in [path, *path.glob("collection/*/storage.sqlite*")])


def unreadable_file(path: Path) -> Path | None:
    """Find which file of a local Qdrant folder cannot be read: its collection list or a collection's points."""
    meta = path / "meta.json"
    try:
        collections = json.loads(meta.read_text())["collections"]
    except (OSError, ValueError, KeyError, TypeError):
        return meta if meta.exists() else None
    for name in collections:
        storage = path / "collection" / str(name) / "storage.sqlite"
        if not storage.exists():
            continue
        try:
            with closing(sqlite3.connect(f"file:{storage}?mode=ro", uri=True)) as db:
                for (blob,) in db.execute("SELECT point FROM points"):
                    pickle.loads(blob)  # noqa: S301 - Qdrant's own file, read exactly as Qdrant reads it
        except Exception:  # any failure to read it back is what broke the open
            return storage
    return None
