"""Text normalised before it is indexed and before it is shown: no hidden characters, one form per letter.

`normalize_text` is the one function every document (at ingest) and every output path (answers, stream
deltas, citations, the terminal, JSON, MCP, the widget) passes through. `skeleton` is for matching only:
it folds homoglyphs (Cyrillic е, Greek ο, …) onto the Latin letters they imitate, and is never shown.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

# Invisible characters that can hide or reorder text: Unicode tag characters (an invisible copy of
# ASCII), bidi embeddings/overrides/isolates and marks (U+202A–E, U+2066–9, U+200E/F, U+061C),
# zero-width space/joiners, word joiner and BOM, invisible math operators, deprecated format controls,
# soft hyphen, combining grapheme joiner, Hangul fillers, variation selectors (a known byte-smuggling
# channel) and interlinear annotation marks. None of them carries meaning a reader of docs needs.
HIDDEN = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# Code is quoted verbatim: a fullwidth letter inside a string literal is the program's own.
_CODE = re.compile(r"(```.*?(?:```|\Z)|`[^`\n]+`)", re.DOTALL)
# Where compatibility forms of letters and digits live: long s, letter-like symbols (ℍ, ℓ), Roman
# numerals, Latin ligatures (ﬁ), fullwidth/halfwidth forms, mathematical alphanumerics (𝐢𝐠𝐧𝐨𝐫𝐞).
_COMPAT = re.compile("[\u017f\u2100-\u214f\u2160-\u2188\ufb00-\ufb06\uff01-\uffee\U0001d400-\U0001d7ff]")
# Only these decompositions are folded; superscripts, fractions, circled and squared forms keep their
# meaning (x² is not x2, ½ is not 1⁄2), and so does CJK punctuation (，。 stay as the writer chose).
_FOLDED_TAGS = ("<wide>", "<narrow>", "<font>", "<compat>")
# Separators a host name may be written with: the ASCII dot and the ideographic/fullwidth/halfwidth
# full stops that IDNA also treats as dots.
DOTS = ".\u3002\uff0e\uff61"


def strip_hidden(text: str) -> str:
    """Remove the invisible characters of `HIDDEN`."""
    return HIDDEN.sub("", text)


def _fold(match: re.Match[str]) -> str:
    """Fold one compatibility character to the ASCII letters or digits it is a variant of, if it is one."""
    char = match.group(0)
    tag = unicodedata.decomposition(char).split(" ", 1)[0]
    folded = unicodedata.normalize("NFKC", char)
    return folded if tag in _FOLDED_TAGS and folded.isascii() and folded.isalnum() else char


def normalize_text(text: str) -> str:
    """Return text without hidden characters, in NFC, with compatibility letters and digits folded outside code.

    Full NFKC would change meaning (superscripts, fractions, CJK punctuation) and, inside code, a
    program's literals; folding only letters and digits written in fullwidth, mathematical or ligature
    form is what makes `ｉｇｎｏｒｅ` read as `ignore` to the injection check and the host check.
    """
    if text.isascii():  # the common case: nothing to strip or fold
        return text
    text = unicodedata.normalize("NFC", strip_hidden(text))
    return "".join(part if i % 2 else _COMPAT.sub(_fold, part) for i, part in enumerate(_CODE.split(text)))


@cache
def _homoglyphs() -> dict[str, str]:
    """Return non-ASCII character -> the ASCII text it imitates, from Unicode's confusables table (loaded once)."""
    from confusable_homoglyphs.confusables import confusables_data  # ~40 ms: only when non-ASCII text is matched

    table = {}
    for char, entries in confusables_data.items():
        if char.isascii():
            continue
        ascii_forms = [e["c"] for e in entries if e["c"].isascii() and e["c"].strip()]
        if ascii_forms:
            table[char] = ascii_forms[0]
    # The table's prototype for a capital I look-alike is "l" (UTS #39 folds I and l together); matching
    # English wants the letter of the same case, which the look-alike's other case gives (І -> і -> i -> I).
    for char, form in list(table.items()):
        other = table.get(char.swapcase(), "") if len(char.swapcase()) == 1 else ""
        if char.isupper() and form.islower() and other.islower() and len(other) == 1:
            table[char] = other.upper()
    return table


def skeleton(text: str) -> str:
    """Return `text` normalised with each homoglyph replaced by the ASCII it imitates: for matching, never shown."""
    text = normalize_text(text)
    if text.isascii():
        return text
    table = _homoglyphs()
    return "".join(table.get(ch, ch) for ch in text)


def is_confusable(word: str) -> bool:
    """Tell whether a word mixes in non-ASCII letters that imitate ASCII ones (`еvil` with a Cyrillic е)."""
    folded = normalize_text(word)
    return not folded.isascii() and skeleton(folded) != folded and skeleton(folded).isascii()
