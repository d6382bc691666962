"""Prompt echo: whether a reply repeats the hidden instructions, however it is spaced, cased or punctuated."""

from __future__ import annotations

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


def compact(text: str) -> str:
    """Fold text to lowercase letters and digits only (compatibility forms folded first)."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).lower())


class PromptEcho:
    """Scan a reply as it streams; `leaked` turns true once it repeats the prompt or contains the canary."""

    def __init__(self, prompt: str, canary: str = "") -> None:
        """Remember the prompt's shingles and the canary's compact forms (whole, and its random part)."""
        folded = compact(prompt)
        self.grams = {folded[i:i + GRAM] for i in range(len(folded) - GRAM + 1)}
        core = compact(canary)
        secret = compact(canary.rpartition("-")[2])
        self.canaries = [c for c in (core, secret) if len(c) >= 8]
        self.seen = ""  # the compact reply so far
        self.run = self.longest = self.shared = 0

    def feed(self, text: str) -> bool:
        """Add reply text; return whether the reply so far leaks the prompt."""
        start = max(0, len(self.seen) - GRAM + 1)
        self.seen += compact(text)
        for i in range(start, len(self.seen) - GRAM + 1):
            hit = self.seen[i:i + GRAM] in self.grams
            self.shared += hit
            self.run = self.run + 1 if hit else 0
            self.longest = max(self.longest, self.run)
        return self.leaked

    @property
    def leaked(self) -> bool:
        """Tell whether what was fed so far repeats the prompt or names the canary."""
        if any(c in self.seen for c in self.canaries):
            return True
        if self.longest and self.longest + GRAM - 1 >= LEAK_RUN:
            return True
        total = len(self.seen) - GRAM + 1
        return total >= SHARE_MIN_GRAMS and self.shared / total >= SHARE_LIMIT

    def lead(self, text: str) -> int:
        """Return how many compact characters `text` holds: how far the scan has looked past a point."""
        return len(compact(text))
