"""Lexical evidence: content terms, document frequencies, and query coverage of a chunk (no file I/O)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from py_rust_stemmers import SnowballStemmer

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an the and or but if of to in on for with by from at as is are was were be been being do does did "
    "how what which who whom whose when where why can could should would will i you we they it its this "
    "that these those there their my your our me us about into than then so not no yes use used using "
    "tell explain describe show give has have had any all some also more most other such".split()
)


def terms(text: str) -> list[str]:
    """Return lowercase content words, crudely singularised so 'sensors' matches 'sensor'."""
    words = _WORD.findall(text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in STOPWORDS and len(w) > 1]


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    """Match a term as `terms` would produce it: the whole word, or the word with its plural 's'."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(term)}s?(?![a-z0-9])")


def matches(term: str, lowered: str) -> bool:
    """Tell whether a term (as `terms` produces it) occurs in lowercase text."""
    return bool(_pattern(term).search(lowered))


def _plain(word: str) -> list[str]:
    """Return the plain adjective a superlative may come from ("quickest": "quick"; "easiest": "easy").

    Snowball keeps superlatives whole, and users ask for "the easiest way" in docs that say "easy". A stem of
    four letters or more, so that "digest" and "request" are not taken for "dig" and "requ".
    """
    base = word.removesuffix("est")
    if base == word or len(base) < 4:
        return []
    forms = [base, base + "e"]  # "quickest", "largest"
    if base.endswith("i"):
        forms.append(base[:-1] + "y")  # "easiest"
    if base[-1] == base[-2]:
        forms.append(base[:-1])  # "biggest"
    return forms


# Snowball, as fastembed's BM25 stems: "becoming", "becomes" and "become" are one word.
_STEMMER = SnowballStemmer("english")


@dataclass(frozen=True)
class Lexicon:
    """How many chunks of an index contain each term."""

    chunks: int = 0
    df: dict[str, int] = field(default_factory=dict)

    def idf(self, term: str) -> float:
        """Weigh a term by its rarity; a term the index never uses weighs most."""
        return math.log((self.chunks + 1) / (self.df.get(term, 0) + 0.5))

    @cached_property
    def stems(self) -> frozenset[str]:
        """Return the stems of every term the index uses (computed once per lexicon)."""
        return frozenset(_STEMMER.stem_words(list(self.df)))

    def uses(self, term: str) -> bool:
        """Tell whether some chunk uses the term or another form of its word ("becoming": "become")."""
        if self.df.get(term, 0) > 0:
            return True
        return any(_STEMMER.stem_word(form) in self.stems for form in (term, *_plain(term)))

    def coverage(self, query_terms: list[str], text: str) -> float:
        """Return the IDF-weighted share of the query's terms that occur in `text` (0 to 1)."""
        total = sum(self.idf(t) for t in query_terms)
        if total <= 0:
            return 0.0
        # Searching the few query terms is cheaper than tokenising every candidate chunk on each query.
        lowered = text.lower()
        return sum(self.idf(t) for t in query_terms if matches(t, lowered)) / total


def build(texts: Iterable[str]) -> Lexicon:
    """Count, for each term, the chunks that contain it."""
    df: Counter[str] = Counter()
    count = 0
    for text in texts:
        df.update(set(terms(text)))
        count += 1
    return Lexicon(count, dict(df))
