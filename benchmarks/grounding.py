"""How the lexical grounding rule separates quoted sentences from invented ones, at several thresholds."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logic import grounding, lexical  # noqa: E402
from logic.extractive import sentences  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "eval" / "textbook" / "corpus"


def blocks(text: str, size: int = 1500) -> list[str]:
    """Cut a page into chunk-sized runs of paragraphs."""
    out, current = [], ""
    for paragraph in text.split("\n\n"):
        if current and len(current) + len(paragraph) > size:
            out.append(current)
            current = ""
        current += paragraph + "\n\n"
    return [*out, current] if current.strip() else out


def main() -> None:
    """Score three kinds of sentence against a chunk: its own, another page's, its own with one term swapped."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args()
    chunks = [(page.name, b) for page in sorted(args.corpus.rglob("*.md")) for b in blocks(page.read_text())]
    lexicon = lexical.build(b for _, b in chunks)
    rng = random.Random(0)
    kinds: dict[str, list[float]] = {"quoted": [], "other page": [], "one rare term swapped": []}
    with_prose = [(name, b, sentences(b)) for name, b in chunks if sentences(b)]
    for _ in range(args.samples):
        name, chunk, own = rng.choice(with_prose)
        other = rng.choice([c for c in with_prose if c[0] != name])
        quoted = rng.choice(own)
        rare = max(set(lexical.terms(quoted)), key=lexicon.idf, default=None)
        foreign = max(set(lexical.terms(rng.choice(other[2]))), key=lexicon.idf, default=None)
        for kind, sentence in (("quoted", quoted), ("other page", rng.choice(other[2])),
                               ("one rare term swapped", quoted.lower().replace(rare, foreign)
                                if rare and foreign and rare != foreign else None)):
            if sentence:
                kinds[kind].append(grounding.lexical_support(sentence + " [1]", chunk, lexicon.idf))
    print("threshold | " + " | ".join(f"{k} judged supported (n={len(v)})" for k, v in kinds.items()))
    for t in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        print(f"{t:.1f} | " + " | ".join(f"{sum(s >= t for s in v) / len(v):.3f}" for v in kinds.values()))


if __name__ == "__main__":
    main()
