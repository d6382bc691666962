"""Prompt echo: whether a reply repeats the hidden instructions, however it is spaced, cased, punctuated or encoded."""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata

# Text is compared letters and digits only, lowercased: "Y o u  a n s w e r" and "you-answer" both
# read "youanswer", so spacing a prompt out (or the canary) does not hide it.
_NOISE = re.compile(r"[^a-z0-9]+")
GRAM = 12  # compared in overlapping 12-character shingles
# A reply sharing this many consecutive characters with the prompt is repeating it (about eight words:
# far more than an honest answer ever shares with the rules it was given).
LEAK_RUN = 48
# Or, over a stretch of reply at least this long, this share of its shingles comes from the prompt
# (the prompt paraphrased with a few words changed).
SHARE_MIN_GRAMS, SHARE_LIMIT = 60, 0.6
# Base64 in the reply: runs of its alphabet (either variant) long enough to carry a sentence, decoded as they grow.
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/_=-]")
BASE64_MIN = 16
# Words a translation keeps as they are: identifiers (NOT_FOUND) and quoted field names ("answerable").
_DISTINCTIVE = re.compile(r"\b[A-Za-z]+_[A-Za-z_]+\b|\"(\w+)\"")
# A reply naming this many of them, none of which the sources use, is describing its instructions.
DISTINCTIVE_LIMIT = 2


def compact(text: str) -> str:
    """Fold text to lowercase letters and digits only (compatibility forms folded first)."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).lower())


def _rot13(text: str) -> str:
    """Return ROT13 of compact text (digits stay)."""
    return codecs.encode(text, "rot13")


class _Overlap:
    """How much a stream of shingles repeats one set of prompt shingles: the longest run and the share."""

    def __init__(self, grams: set[str]) -> None:
        self.grams = grams
        self.run = self.longest = self.shared = self.total = 0

    def add(self, gram: str) -> None:
        """Count one shingle of the reply."""
        hit = gram in self.grams
        self.total += 1
        self.shared += hit
        self.run = self.run + 1 if hit else 0
        self.longest = max(self.longest, self.run)

    @property
    def leaked(self) -> bool:
        """Tell whether the shingles so far repeat the prompt: a long run, or most of a long stretch."""
        if self.longest and self.longest + GRAM - 1 >= LEAK_RUN:
            return True
        return self.total >= SHARE_MIN_GRAMS and self.shared / self.total >= SHARE_LIMIT


class _Compact:
    """Compact text fed in pieces, measured against the prompt as written, ROT13-encoded and reversed."""

    def __init__(self, grams: set[str]) -> None:
        # A shingle of a ROT13 (or reversed) reply is the ROT13 (or reverse) of a prompt shingle: one lookup each.
        self.views = [_Overlap(grams), _Overlap({_rot13(g) for g in grams}), _Overlap({g[::-1] for g in grams})]
        self.seen = ""

    def feed(self, folded: str) -> None:
        """Add compact text and count the shingles it completes."""
        start = max(0, len(self.seen) - GRAM + 1)
        self.seen += folded
        for i in range(start, len(self.seen) - GRAM + 1):
            gram = self.seen[i:i + GRAM]
            for view in self.views:
                view.add(gram)

    @property
    def leaked(self) -> bool:
        """Tell whether any view repeats the prompt."""
        return any(view.leaked for view in self.views)


class PromptEcho:
    """Scan a reply as it streams; `leaked` turns true once it repeats the prompt or contains the canary.

    Read as written, ROT13-encoded, reversed and base64-decoded; a translation is caught by the canary or
    by the prompt's own identifiers and field names (which a translation keeps) when the sources use none.
    """

    def __init__(self, prompt: str, canary: str = "", sources: str = "") -> None:
        """Remember the prompt's shingles, the canary's compact forms and the prompt's distinctive words."""
        folded = compact(prompt)
        self.grams = {folded[i:i + GRAM] for i in range(len(folded) - GRAM + 1)}
        core = compact(canary)
        secret = compact(canary.rpartition("-")[2])
        found = [c for c in (core, secret) if len(c) >= 8]
        self.canaries = [*found, *(_rot13(c) for c in found), *(c[::-1] for c in found)]
        self.plain = _Compact(self.grams)
        self.decoded = _Compact(self.grams)  # what the reply's base64 runs decode to
        self.raw = ""
        self.run_from = 0  # where the base64-alphabet run at the end of `raw` starts
        self.run_done = 0  # how many of its characters are decoded (a multiple of 4)
        self.utf8 = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        words = {m.group(1) or m.group(0) for m in _DISTINCTIVE.finditer(prompt)}
        self.distinctive = {w: re.compile(rf"\b{re.escape(w)}\b") for w in words if w not in sources}
        self.named: set[str] = set()

    @property
    def seen(self) -> str:
        """The compact reply so far."""
        return self.plain.seen

    def feed(self, text: str) -> bool:
        """Add reply text; return whether the reply so far leaks the prompt."""
        before = len(self.raw)
        self.raw += text
        self.plain.feed(compact(text))
        self._base64(before)
        recent = self.raw[max(0, before - 40):]  # a word may straddle two pieces
        self.named |= {w for w, pattern in self.distinctive.items() if w not in self.named and pattern.search(recent)}
        return self.leaked

    def _base64(self, scanned: int) -> None:
        """Decode the base64 runs of the reply as they grow, four characters at a time (`scanned`: read before)."""
        for end in _NOT_BASE64.finditer(self.raw, max(scanned, self.run_from)):
            self._decode(self.raw[self.run_from:end.start()], final=True)
            self.run_from, self.run_done = end.end(), 0
        self._decode(self.raw[self.run_from:], final=False)

    def _decode(self, run: str, final: bool) -> None:
        """Feed the newly complete groups of a run once it is long enough to carry a sentence."""
        if len(run) < BASE64_MIN:
            return
        usable = run.rstrip("=").replace("-", "+").replace("_", "/")
        stop = len(usable) if final else len(usable) // 4 * 4
        piece = usable[self.run_done:stop]
        if not piece or len(piece) % 4 == 1:  # nothing new, or a stray character no base64 ends with
            return
        try:
            data = base64.b64decode(piece + "=" * (-len(piece) % 4))
        except (binascii.Error, ValueError):
            return
        self.run_done = stop
        self.decoded.feed(compact(self.utf8.decode(data, final=final)))

    @property
    def leaked(self) -> bool:
        """Tell whether what was fed so far repeats the prompt, names the canary or describes the prompt."""
        if any(c in self.plain.seen or c in self.decoded.seen for c in self.canaries):
            return True
        return self.plain.leaked or self.decoded.leaked or len(self.named) >= DISTINCTIVE_LIMIT

    def lead(self, text: str) -> int:
        """Return how many compact characters `text` holds: how far the scan has looked past a point."""
        return len(compact(text))
