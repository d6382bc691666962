"""English words, as the bundled embedder's tokenizer knows them whole: what a typo check must not correct."""

from __future__ import annotations

import json
from functools import lru_cache

from logic import bundled_model


@lru_cache(maxsize=1)
def english() -> frozenset[str]:
    """Return the lowercase whole words of the bundled tokenizer's vocabulary (about 22,000 of them)."""
    with open(bundled_model.tokenizer_file(), encoding="utf-8") as handle:
        vocabulary = json.load(handle)["model"]["vocab"]
    return frozenset(w for w in vocabulary if w.isalpha() and w.islower())
