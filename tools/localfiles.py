"""Reading a folder's documents safely: text files only, bounded in size, never outside the folder."""

from __future__ import annotations

import os
from pathlib import Path

SUFFIXES = {".md", ".mdx", ".rst", ".ipynb", ".html", ".htm"}
# Documents in a format ingest does not read: reported by name, so a folder of them does not index silently empty.
UNREAD = {".adoc": "AsciiDoc", ".asciidoc": "AsciiDoc", ".org": "Org mode", ".tex": "LaTeX",
          ".pdf": "PDF", ".docx": "Word", ".odt": "OpenDocument"}
MAX_FILE_BYTES = 10_000_000  # a docs page is far smaller; a bigger file is reported, never read


class NotADocumentError(ValueError):
    """A file with a document's name that is not a text document (binary, too large, outside the folder)."""


def read_document(path: Path) -> tuple[str, str]:
    """Return a file's text and a note on what could not be decoded ("" when it is clean UTF-8)."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise NotADocumentError(f"larger than {MAX_FILE_BYTES // 1_000_000} MB, not read")
    with path.open("rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)  # bounded even if the file grows while it is read
    if len(raw) > MAX_FILE_BYTES:
        raise NotADocumentError(f"larger than {MAX_FILE_BYTES // 1_000_000} MB, not read")
    head = raw[:8192]
    if b"\x00" in head:
        raise NotADocumentError("binary file (NUL bytes), not text")
    try:
        return raw.decode("utf-8-sig"), ""
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        sample = text[:8192]
        if sample.count("\ufffd") > len(sample) / 10:  # mostly undecodable: an image or archive, not prose
            raise NotADocumentError("binary file (not UTF-8 text)") from exc
        line = raw.count(b"\n", 0, exc.start) + 1
        return text, (f"not valid UTF-8 (first bad byte on line {line}, byte offset {exc.start}; "
                      f"{text.count(chr(0xFFFD))} replaced with U+FFFD); save the file as UTF-8")


def listing(root: Path, skipped: dict[str, str]) -> list[Path]:
    """List the folder's documents without following symlinked folders; hidden folders are skipped."""
    if root.is_file():
        return [root]
    paths: list[Path] = []
    for folder, dirs, files in os.walk(root):  # followlinks=False: a symlinked folder is never entered
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in dirs:
            if (Path(folder) / name).is_symlink():
                skipped[(Path(folder) / name).relative_to(root).as_posix()] = "symlinked folder, not followed"
        paths.extend(Path(folder) / f for f in files if Path(f).suffix in SUFFIXES)
        for name in files:
            kind = UNREAD.get(Path(name).suffix.lower())
            if kind:
                skipped[(Path(folder) / name).relative_to(root).as_posix()] = (
                    f"{kind} is not read (only {', '.join(sorted(SUFFIXES))}); ingest the site's built HTML instead")
    return sorted(paths)


def inside(path: Path, root: Path) -> bool:
    """Tell whether a path, symlinks resolved, is a regular file inside the folder being ingested."""
    real = path.resolve()
    return real.is_file() and (real == root.resolve() or real.is_relative_to(root.resolve()))
