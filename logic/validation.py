"""What counts as a valid question: clean Unicode text of a bounded length."""

from __future__ import annotations

import re
import unicodedata

from logic.errors import InvalidInputError
from logic.unicode_text import HIDDEN

# Terminal escape sequences, whole: strings (OSC such as ESC]52 clipboard writes and window titles,
# DCS, SOS, PM, APC) up to their terminator, CSI (ESC[ or 8-bit 0x9b: clear screen, cursor moves),
# then any other ESC + one character. Removing only the ESC would leave an OSC payload as text.
_ANSI = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]{0,4096}(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b[ -~]?")
# C0/C1 controls except tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Zero-width, bidi controls and Unicode tag characters: invisible text that can smuggle instructions.
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")


# Marks the empty stand-in the messages channel stores instead of a message it could not read (non-text
# content) or would not store (oversized); its value says why, and classify refuses the turn with it.
UNREADABLE = "unreadable_message"

# A selection is embedded part by part on every new question, so it is bounded: a long docs page (the longest
# chapters of a programming book run to 30,000 characters) fits, a book does not.
MAX_SELECTION_CHARS = 50_000


def _clean(content: object, what: str) -> str:
    """Strip escapes, controls and invisible characters, normalise, and raise if the text is unusable."""
    if not isinstance(content, str):
        raise InvalidInputError(f"the {what} must be plain text")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in content):
        raise InvalidInputError(f"the {what} contains invalid Unicode (lone surrogates)")
    text = _INVISIBLE.sub("", _CONTROL.sub("", _ANSI.sub("", content)))
    return unicodedata.normalize("NFC", text).strip()


def printable(text: str) -> str:
    """Return text safe to write to a terminal: no escape sequences, no control characters but tab and newline.

    Nor hidden characters: a bidi override reorders what the terminal shows, tag characters carry invisible text.
    """
    return HIDDEN.sub("", _CONTROL.sub("", _ANSI.sub("", text)))


def clean_question(content: object, max_chars: int = 1000) -> str:
    """Return the normalised question, or raise InvalidInputError naming what is wrong with it."""
    text = _clean(content, "question")
    if not text:
        raise InvalidInputError("the question is empty; type a question about the documentation")
    if len(text) > max_chars:
        raise InvalidInputError(
            f"the question is too long ({len(text)} characters; the limit is {max_chars}); shorten it"
        )
    return text


def clean_selection(content: object, max_chars: int = MAX_SELECTION_CHARS) -> str:
    """Return the normalised text selection ("" for none), or raise InvalidInputError naming the problem."""
    text = _clean(content, "selection (context)")
    if len(text) > max_chars:
        raise InvalidInputError(
            f"the selection (context) is too long ({len(text)} characters; the limit is {max_chars}); "
            "select a shorter passage"
        )
    return text
