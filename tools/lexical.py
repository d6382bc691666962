"""Lexical evidence: content terms, the index's document frequencies, and query coverage of a chunk."""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tools.errors import StorageError

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the and or but if of to in on for with by from at as is are was were be been being do does did "
    "how what which who whom whose when where why can could should would will i you we they it its this "
    "that these those there their my your our me us about into than then so not no yes use used using "
    "tell explain describe show give has have had any all some also more most other such".split()
)


def terms(text: str) -> list[str]:
    """Return lowercase content words, crudely singularised so 'sensors' matches 'sensor'."""
    words = _WORD.findall(text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOPWORDS and len(w) > 1]


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    """Match a term as `terms` would produce it: the whole word, or the word with its plural 's'."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(term)}s?(?![a-z0-9])")


@dataclass(frozen=True)
class Lexicon:
    """How many chunks of an index contain each term."""

    chunks: int = 0
    df: dict[str, int] = field(default_factory=dict)

    def idf(self, term: str) -> float:
        """Weigh a term by its rarity; a term the index never uses weighs most."""
        return math.log((self.chunks + 1) / (self.df.get(term, 0) + 0.5))

    def coverage(self, query_terms: list[str], text: str) -> float:
        """Return the IDF-weighted share of the query's terms that occur in `text` (0 to 1)."""
        total = sum(self.idf(t) for t in query_terms)
        if total <= 0:
            return 0.0
        # Searching the few query terms is cheaper than tokenising every candidate chunk on each query.
        lowered = text.lower()
        return sum(self.idf(t) for t in query_terms if _pattern(t).search(lowered)) / total


def build(texts: Iterable[str]) -> Lexicon:
    """Count, for each term, the chunks that contain it."""
    df: Counter[str] = Counter()
    count = 0
    for text in texts:
        df.update(set(terms(text)))
        count += 1
    return Lexicon(count, dict(df))


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
