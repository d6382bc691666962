"""Where an index keeps its lexicon: save it next to the manifest, load it (cached until the file changes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from logic.errors import StorageError
from logic.lexical import Lexicon


def path_for(data_dir: str | Path, collection: str) -> Path:
    """Return where a collection's lexicon is kept."""
    return Path(data_dir) / "lexicon" / f"{collection}.json"


def save(data_dir: str | Path, collection: str, lexicon: Lexicon) -> None:
    """Write the lexicon atomically next to the manifest."""
    path = path_for(data_dir, collection)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"chunks": lexicon.chunks, "df": lexicon.df}, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a full disk must not leave a half-written file behind
        raise


_loaded: dict[Path, tuple[int, Lexicon]] = {}


def load(data_dir: str | Path, collection: str) -> Lexicon | None:
    """Return the collection's lexicon (cached until the file changes), or None if there is none."""
    path = path_for(data_dir, collection)
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    cached = _loaded.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    try:
        raw = json.loads(path.read_text())
        lexicon = Lexicon(int(raw["chunks"]), {str(k): int(v) for k, v in raw["df"].items()})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StorageError(f"cannot read the lexicon {path}: {exc}; re-run ingest to rebuild it") from exc
    _loaded[path] = (stamp, lexicon)
    return lexicon
