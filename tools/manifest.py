"""What an index was built with: embedder, dimension, calibrated threshold and document hashes."""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from logic import answerability
from logic.errors import IndexMismatchError, IndexMissingError, StorageError

# Best threshold measured per embedder (balanced accuracy on labelled in/out-of-scope questions;
# see README "Score gate"). Embedders not listed fall back to FALLBACK_THRESHOLD until calibrated.
# The gate compares `gate_score` (logic/answerability.py, a fitted probability built from the cosine and
# term evidence, never the fusion rank) with the threshold; measured on a hybrid index of the textbook.
CALIBRATED_THRESHOLDS = {"local/all-MiniLM-L6-v2": answerability.THRESHOLD}
FALLBACK_THRESHOLD = answerability.THRESHOLD
# How candidates are fetched: "dense" (cosine neighbours) or "hybrid" (RRF of cosine and BM25 neighbours).
# Indexes built before the choice existed have no "retrieval" entry and are dense.
RETRIEVAL_MODES = ("dense", "hybrid")
DEFAULT_RETRIEVAL = "hybrid"


def manifest_path(data_dir: str | Path) -> Path:
    """Return where the manifest of a data directory lives."""
    return Path(data_dir) / "manifest.json"


REMEDY = "run `rag-agent ingest PATH --recreate` to rebuild the index and its manifest"


def load(data_dir: str | Path) -> dict[str, Any]:
    """Read the manifest, empty when nothing has been ingested."""
    path = manifest_path(data_dir)
    if not path.exists():
        return {"collections": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError as exc:  # nesting deeper than the parser's stack: no manifest is written so
        raise StorageError(f"the index manifest is corrupt: {path} (nested too deep to read); {REMEDY}") from exc
    except (OSError, ValueError) as exc:
        raise StorageError(f"cannot read the index manifest {path} ({exc}); {REMEDY}") from exc
    problem = _shape_problem(data)
    if problem:
        raise StorageError(f"the index manifest {path} is not a rag-agent manifest ({problem}); {REMEDY}")
    return dict(data)


def _shape_problem(data: Any) -> str:
    """Say what makes parsed JSON unusable as a manifest, or "" when it is one."""
    if not isinstance(data, dict) or not isinstance(data.get("collections"), dict):
        return "no 'collections' object"
    for name, info in data["collections"].items():
        if not isinstance(info, dict) or not isinstance(info.get("embedding_model"), str) \
                or not isinstance(info.get("documents"), dict):
            return f"collection {name!r} has no embedding model or document list"
    return ""


def set_aside(data_dir: str | Path) -> Path:
    """Move an unreadable manifest out of the way (kept for inspection) and return where it went."""
    path = manifest_path(data_dir)
    target = path.with_name(f"{path.name}.corrupt-{datetime.now(UTC):%Y%m%d%H%M%S}")
    try:
        path.replace(target)
    except OSError as exc:
        raise StorageError(f"cannot move the unreadable index manifest {path} aside: {exc.strerror or exc}; "
                           "delete it by hand and re-run ingest") from exc
    return target


_read: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def load_cached(data_dir: str | Path) -> dict[str, Any]:
    """Return the manifest for reading only, parsed again only when the file changes (every turn reads it)."""
    path = manifest_path(data_dir)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {"collections": {}}
    # save() replaces the file, so a new inode marks a rewrite even within one mtime tick.
    stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    cached = _read.get(path)
    if cached is None or cached[0] != stamp:
        cached = (stamp, load(data_dir))
        _read[path] = cached
    return cached[1]


def save(data_dir: str | Path, data: dict[str, Any]) -> None:
    """Write the manifest atomically, so an interrupted write never leaves half a file (or a temp file)."""
    path = manifest_path(data_dir)
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        raise StorageError(f"cannot write the index manifest {path}: {exc.strerror or exc}; free disk space "
                           "or make the folder writable, then re-run ingest (finished pages are kept)") from exc


def collection_info(data_dir: str | Path, collection: str, embedding_model: str) -> dict[str, Any]:
    """Return a collection's entry (not to be modified), checking it was built with the embedder now configured."""
    info: dict[str, Any] | None = load_cached(data_dir)["collections"].get(collection)
    if not info:
        raise IndexMissingError(
            # No path: a server's folders are nobody's business (`rag-agent config` shows them to the operator).
            f"no documents are indexed in collection {collection!r} yet; "
            "run `rag-agent ingest PATH` first"
        )
    if info["embedding_model"] != embedding_model:
        raise IndexMismatchError(
            f"collection {collection!r} was built with {info['embedding_model']} but "
            f"{embedding_model} is configured; re-ingest with --recreate or configure the same embedder"
        )
    return info


def retrieval_mode(info: dict[str, Any]) -> str:
    """Return how a collection's candidates are fetched."""
    return str(info.get("retrieval", "dense"))


def new_version(info: dict[str, Any]) -> None:
    """Give the collection a new index version: results computed from its previous content are stale."""
    info["version"] = uuid.uuid4().hex


def version(info: dict[str, Any]) -> str:
    """Return the collection's index version (an index from before versions existed: its last update time)."""
    return str(info.get("version") or info.get("updated_at") or "")


def default_threshold(embedding_model: str) -> float:
    """Return the calibrated gate threshold for an embedder."""
    return CALIBRATED_THRESHOLDS.get(embedding_model, FALLBACK_THRESHOLD)


def _calibrated(info: dict[str, Any]) -> bool:
    """Tell whether the collection's threshold was calibrated for the gate score in use."""
    return (info.get("calibration") or {}).get("gate") == answerability.GATE_VERSION


def threshold(info: dict[str, Any]) -> float:
    """Return a collection's gate threshold: its own calibration if it has one, else the embedder's default."""
    # Only a calibration is specific to the index; a copied default would go stale when the
    # shipped default is re-measured (as when the gate's confidence score changed).
    # A calibration of another gate score (the cosine-based one before answerability-1) no longer applies.
    if _calibrated(info):
        return float(info["threshold"])
    return default_threshold(str(info["embedding_model"]))


def resolve_threshold(configured: float | None, info: dict[str, Any] | None, embedding_model: str) -> tuple[float, str]:
    """Return the threshold a turn gates with and why: the run's own, the index's, or the embedder's default."""
    if configured is not None:
        return configured, "set in the context"
    if info:
        if _calibrated(info):
            return threshold(info), "calibrated for this index"
        stale = " (the index's calibration was for an earlier gate: calibrate again)" if info.get("calibration") else ""
        return threshold(info), f"the embedder's default{stale}"
    return default_threshold(embedding_model), "default; nothing ingested yet"


def store_threshold(data_dir: str | Path, collection: str, threshold: float, calibration: dict[str, Any]) -> None:
    """Make a calibrated threshold the collection's default, recording how it was measured."""
    data = load(data_dir)
    info = data["collections"].get(collection)
    if not info:
        raise IndexMissingError(f"no collection {collection!r} under {data_dir} to calibrate; run ingest first")
    info["threshold"] = threshold
    info["calibration"] = calibration
    save(data_dir, data)
