"""What the reading model reads: a section cut into short passages, and the text it is shown for each."""

from __future__ import annotations

from dataclasses import dataclass

from logic.passages import Unit, plain, units
from logic.types import Chunk

# A passage is a paragraph (with the list, table or code it introduces), cut into windows of about this many
# words: the reader sees at most 128 word pieces with the question, so a longer window loses its end.
WINDOW_WORDS = 60
# Lines of a code or table block shown to the reader: its opening says what it is.
BLOCK_LINES = 8
# Passages read per turn, the embedder's favourites: reading costs ~4 ms a passage, and on the sites benchmark
# the passage that answers was among the embedder's best four about as often as among its best eight.
READ_PASSAGES = 4


@dataclass(frozen=True)
class Passage:
    """A window of a chunk's units: their positions in `units(chunk)` and the text the reader is shown."""

    unit_positions: tuple[int, ...]
    text: str


def _shown(unit: Unit) -> str:
    """Return a unit as the reader sees it: prose as plain words, a block's first lines as written."""
    if unit.kind in ("sentence", "list"):
        return plain(f"{unit.lead} {unit.body}")
    lines = [line for line in unit.body.splitlines() if line.strip() and not line.lstrip().startswith(("```", "~~~"))]
    return f"{plain(unit.lead)} {' '.join(line.strip() for line in lines[:BLOCK_LINES])}".strip()


def passage_text(found: list[Unit], positions: list[int], heading: str) -> str:
    """Return what the reader is shown of some units of a chunk: their section, then their words."""
    body = " ".join(_shown(found[k]) for k in positions)
    return f"{heading}: {body}" if heading else body


def shown(unit: Unit) -> str:
    """Return a unit's words as the reader is shown them."""
    return _shown(unit)


def windows(found: list[Unit], heading: str) -> list[Passage]:
    """Group a chunk's units by paragraph into windows of about WINDOW_WORDS words, each headed by its section."""
    out: list[Passage] = []
    current: list[int] = []
    size = 0

    def close() -> None:
        if current:
            out.append(Passage(tuple(current), passage_text(found, current, heading)))

    for k, unit in enumerate(found):
        words = len(_shown(unit).split())
        same = current and found[current[-1]].paragraph == unit.paragraph
        if not same or size + words > WINDOW_WORDS:
            close()
            current, size = [], 0
        current.append(k)
        size += words
    close()
    return out


def passages(markdown: str, heading: str) -> list[Passage]:
    """Return a chunk's passages for the reader (`heading`: the section's title and headings, most specific last)."""
    return windows(units(markdown), heading)


def heading_of(chunk: Chunk) -> str:
    """Return the section a chunk belongs to as the reader is shown it: its page title and innermost heading."""
    names = [plain(n) for n in [chunk["title"], *chunk["heading_hierarchy"][-1:]]]
    return " > ".join(dict.fromkeys(n for n in names if n))


def chosen(cosines: list[float], count: int = READ_PASSAGES) -> list[int]:
    """Return the positions of the `count` passages the embedder ranks highest, best first."""
    return sorted(range(len(cosines)), key=lambda i: -cosines[i])[:count]
