"""Offline answers: pick the retrieved sentences that best match the query and cite them."""

from __future__ import annotations

import math
import re
from collections import Counter

_FENCE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Emphasis and code markers, quote and heading prefixes; intra-word underscores (OPENAI_API_KEY) stay.
_MD_NOISE = re.compile(r"\*+|`+|^\s*[>#]+\s*|(?<!\w)_+|_+(?!\w)")
_BULLET = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the and or but if of to in on for with by from at as is are was were be been being do does did "
    "how what which who whom whose when where why can could should would will i you we they it its this "
    "that these those there their my your our me us about into than then so not no yes use used using "
    "tell explain describe show give".split()
)


def _terms(text: str) -> list[str]:
    """Return lowercase content words, crudely singularised so 'sensors' matches 'sensor'."""
    words = _WORD.findall(text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOPWORDS]


def sentences(markdown: str) -> list[str]:
    """Split a chunk's Markdown into readable prose sentences, dropping code and table rows."""
    text = _MD_LINK.sub(r"\1", _FENCE_BLOCK.sub(" ", markdown))
    out: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("|") or not line.strip():
            continue
        line = _MD_NOISE.sub("", _BULLET.sub("", line)).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if len(s.split()) >= 4)
    return out


def excerpt(markdown: str, limit: int = 300) -> str:
    """Quote the start of a chunk that has no prose (only code or a table), cut at a line end."""
    text = markdown.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit("\n", 1)[0] + "\n…"
    return cut + "\n```" if cut.count("```") % 2 else cut


def extract_answer(query: str, chunks: list[str], max_sentences: int = 3) -> list[tuple[int, str]]:
    """Return (chunk position, sentence) pairs that answer `query`, in reading order."""
    candidates = [(i, j, s) for i, chunk in enumerate(chunks) for j, s in enumerate(sentences(chunk))]
    if not candidates:
        # Only code or tables were retrieved: quote the best chunk rather than dropping it.
        return [(0, "\n" + excerpt(chunks[0]) + "\n")] if chunks and chunks[0].strip() else []
    query_terms = set(_terms(query))
    document_freq = Counter(t for _, _, s in candidates for t in set(_terms(s)))
    n = len(candidates)

    def score(item: tuple[int, int, str]) -> float:
        rank, position, sentence = item
        overlap = query_terms & set(_terms(sentence))
        lexical = sum(math.log(1 + n / document_freq[t]) for t in overlap)
        # Earlier chunks are more relevant and earlier sentences tend to define the topic.
        # A sentence that only introduces a list ("configure the following:") says little alone.
        dangling = 0.8 if sentence.endswith(":") else 0.0
        return lexical + 1.0 / (1 + rank) + 0.3 / (1 + position) - dangling

    best = sorted(candidates, key=score, reverse=True)[:max_sentences]
    return [(rank, sentence) for rank, _, sentence in sorted(best)]
