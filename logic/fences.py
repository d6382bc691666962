"""Fenced code blocks as CommonMark reads them: a block closes only at a fence of its own character, as long or longer.

So a ```` ````markdown ```` block can show a ```` ``` ```` block inside it, as docs about Markdown do.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A backtick fence's info string holds no backtick: "```fit1``` is the first fit" is a paragraph with a code span.
_OPENING = re.compile(r"^[ \t]*(`{3,}(?=[^`\n]*$)|~{3,})")
# A whole block in a page's text (quote markers allowed before its fences), or the rest of the text when unclosed.
BLOCK = re.compile(r"^[ \t>]*(`{3,}(?=[^`\n]*$)|~{3,}).*?(?:^[ \t>]*\1[`~]*[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)


def opening(line: str) -> str | None:
    """Return the fence a line would open a code block with (```` ``` ````, ```` ```` ````, ``~~~``), or None."""
    match = _OPENING.match(line)
    return match.group(1) if match else None


def closes(line: str, fence: str) -> bool:
    """Tell whether `line` closes a block opened by `fence`: the same character, at least as many, nothing else."""
    bare = line.strip()
    return len(bare) >= len(fence) and set(bare) == {fence[0]}


class Tracker:
    """Follow Markdown line by line through its fenced code blocks."""

    def __init__(self) -> None:
        self.fence: str | None = None  # the fence of the block the last line left open

    @property
    def inside(self) -> bool:
        """Tell whether the lines read so far leave a code block open."""
        return self.fence is not None

    def fence_line(self, line: str) -> bool:
        """Read the next line; tell whether it opens or closes a block."""
        if self.fence is None:
            self.fence = opening(line)
            return self.fence is not None
        if closes(line, self.fence):
            self.fence = None
            return True
        return False


_BACKTICKS = re.compile(r"`+")


def span_open(text: str) -> bool:
    """Tell whether text leaves an inline code span open: a run of backticks that no run as long closes after it.

    As CommonMark pairs them, so ``a`b`` is one closed span holding a backtick.
    """
    opened = 0
    for run in _BACKTICKS.finditer(text):
        if not opened:
            opened = len(run.group(0))
        elif len(run.group(0)) == opened:
            opened = 0
    return bool(opened)


# A block in an answer, wherever its fence starts (a model may open one mid-line), closed by a fence as long.
IN_ANSWER = re.compile(r"(`{3,}).*?(?:(?P<close>\1`*)|\Z)", re.DOTALL)


def unclosed(text: str) -> bool:
    """Tell whether an answer's text so far leaves a code block open (a four-backtick block stays open past three)."""
    blocks = list(IN_ANSWER.finditer(text))
    return bool(blocks) and blocks[-1].group("close") is None


def split(text: str, blocks: re.Pattern[str] = BLOCK) -> list[str]:
    """Split text into prose and code blocks, alternating, prose first (so odd positions hold the blocks)."""
    out, at = [], 0
    for block in blocks.finditer(text):
        out += [text[at:block.start()], block.group(0)]
        at = block.end()
    return [*out, text[at:]]


def outside(text: str, change: Callable[[str], str], blocks: re.Pattern[str] = BLOCK) -> str:
    """Apply `change` to the text outside fenced code blocks, leaving each block as written."""
    return "".join(part if i % 2 else change(part) for i, part in enumerate(split(text, blocks)))
