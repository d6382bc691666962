"""Offline answers: pick the retrieved sentences that best match the query and cite them."""

from __future__ import annotations

import math
import re
from collections import Counter

from logic.lexical import terms

_FENCE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Emphasis and code markers, quote and heading prefixes; intra-word underscores (OPENAI_API_KEY) stay.
_MD_NOISE = re.compile(r"\*+|`+|^\s*[>#]+\s*|(?<!\w)_+|_+(?!\w)")
_BULLET = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+")
_PROSE_WORD = re.compile(r"^[(\"'“]?[A-Za-z][A-Za-z'’-]*[.,;:!?)\"'”]*$")
_CODE_SIGNAL = re.compile(r'"""|\(self\b|^\s*(?:def|class|import|from)\s|\s=\s')
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _continues(previous: str, line: str) -> bool:
    """Tell whether `line` is a hard-wrapped continuation of the sentence on the `previous` line."""
    stripped = line.strip()
    if not previous or not stripped or stripped.startswith(("|", "#", ">")) or _BULLET.match(line):
        return False
    if previous.rstrip().endswith((".", "!", "?")) or _CODE_SIGNAL.search(previous + " " + line):
        return False
    if previous.rstrip().endswith(":") and not stripped[0].islower():  # a lead-in to a list or a new sentence
        return False
    # A bullet's own wrapped lines are indented; an unindented line after it is a new paragraph.
    return _is_prose(previous) and (not _BULLET.match(previous) or line.startswith((" ", "\t")))


def _blocks(text: str) -> list[str]:
    """Join hard-wrapped lines into the sentences they belong to; each other line stands alone."""
    blocks: list[str] = []
    previous = ""
    for line in text.splitlines():
        if blocks and _continues(previous, line):
            blocks[-1] += " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("|"):  # table rows are data, not prose
            blocks.append(line)
        previous = line if line.strip() else ""
    return blocks


def sentences(markdown: str) -> list[str]:
    """Split a chunk's Markdown into readable prose sentences, dropping code and table rows."""
    text = _MD_LINK.sub(r"\1", _FENCE_BLOCK.sub(" ", markdown))
    out: list[str] = []
    for block in _blocks(text):
        block = _MD_NOISE.sub("", _BULLET.sub("", block)).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(block) if _is_prose(s))
    return out


def _is_prose(sentence: str) -> bool:
    """Tell prose from code or data that slipped out of a split code block (`x = f(y)`, `0.0, 0.25`)."""
    tokens = sentence.split()
    if len(tokens) < 4 or _CODE_SIGNAL.search(sentence):
        return False
    return sum(bool(_PROSE_WORD.match(t)) for t in tokens) >= 0.6 * len(tokens)


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
    query_terms = set(terms(query))
    document_freq = Counter(t for _, _, s in candidates for t in set(terms(s)))
    n = len(candidates)

    def score(item: tuple[int, int, str]) -> float:
        rank, position, sentence = item
        overlap = query_terms & set(terms(sentence))
        lexical = sum(math.log(1 + n / document_freq[t]) for t in overlap)
        # Earlier chunks are more relevant and earlier sentences tend to define the topic.
        # A sentence that only introduces a list ("configure the following:") says little alone.
        dangling = 0.8 if sentence.endswith(":") else 0.0
        return lexical + 1.0 / (1 + rank) + 0.3 / (1 + position) - dangling

    # A sentence sharing no term with the question rarely answers it; keep such ones only as a fallback.
    relevant = [c for c in candidates if query_terms & set(terms(c[2]))]
    if not relevant and candidates[0][0] != 0 and chunks[0].strip():
        # The best chunk is code or a table and no sentence elsewhere names the question's terms:
        # the best chunk is still the best evidence, rather than prose from a weaker match.
        return [(0, "\n" + excerpt(chunks[0]) + "\n")]
    relevant = relevant or candidates
    best = sorted(relevant, key=score, reverse=True)[:max_sentences]
    return [(rank, sentence) for rank, _, sentence in sorted(best)]
