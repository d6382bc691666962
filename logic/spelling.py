"""Typos in a question, corrected to the words the documentation itself uses ("pubish" → "publish")."""

from __future__ import annotations

import re
from collections.abc import Container, Mapping

from logic.lexical import STOPWORDS, terms

# A word, or one part of a snake_case name typed in the question's prose ("befor_request" is "before_request"
# mistyped); not a word of a path, a flag, a dotted name or a code span, which are quoted as written.
_WORD = re.compile(r"(?<![\w.\-/`'])[A-Za-z]+(?:_[A-Za-z]+)*(?![\w.\-/`'(])")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Shorter words have too many neighbours one edit away ("sent" → "set", "send", "spent"), and a word the
# documentation uses only once is as likely a typo of its own as the word meant.
MIN_LENGTH = 5
MIN_DOCUMENTS = 3


def _edits(word: str) -> set[str]:
    """Return every string one deletion, transposition or insertion away from `word`, its first letter kept.

    Not replacements: a letter typed for another turns a word the documentation lacks into one it has too
    often ("servos" → "serves", "locale" → "locals", "serde" → "serie"), where a letter dropped, doubled or
    swapped rarely makes a word ("serch", "pubish", "chnage"). People seldom mistype a word's first letter,
    and a last letter dropped makes another word ("polder" → "older", "realy" → "real").
    """
    splits = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    return ({a + b[1:] for a, b in splits if len(b) > 1}
            | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b for a, b in splits for c in _LETTERS})


def _known(word: str, df: Mapping[str, int]) -> int:
    """Return how many chunks use the word, as `terms` would count it (0: unused)."""
    found = terms(word)
    return df.get(found[0], 0) if found else 0


_ENDINGS = ("", "e", "s", "es", "ed", "d", "ing", "ly", "er", "ers")


def english(word: str, words: Container[str]) -> bool:
    """Tell whether `word`, or its stem before a common ending, is a word of `words` (a general English list)."""
    return any(word.endswith(end) and word[:len(word) - len(end)] in words for end in _ENDINGS)


def correction(word: str, df: Mapping[str, int], words: Container[str]) -> str | None:
    """Return the word the documentation uses that `word` misspells, or None when it is not a typo of one.

    Only a lowercase word of MIN_LENGTH letters or more is corrected that neither a chunk nor English (`words`)
    uses, to the word one edit away (a letter dropped, doubled or swapped) that the most chunks use, at least
    MIN_DOCUMENTS. A capitalised word is a name: an unknown name is what the gate must notice, never a
    typo to repair; nor is an English word the documentation does not use ("stick" is no typo of "stack").
    """
    if len(word) < MIN_LENGTH or not word.islower() or word in STOPWORDS or _known(word, df) or english(word, words):
        return None
    best = max(((_known(edit, df), edit) for edit in _edits(word)), default=(0, ""))
    return best[1] if best[0] >= MIN_DOCUMENTS else None


def corrected(question: str, df: Mapping[str, int], words: Container[str]) -> str:
    """Return the question with its misspelt words replaced by the documentation's own (unchanged if none)."""
    if not df:
        return question
    return _WORD.sub(lambda m: "_".join(correction(part, df, words) or part for part in m.group(0).split("_")),
                     question)
