"""Why a storage folder cannot be written: said plainly, so a read-only disk is not mistaken for damage."""

from __future__ import annotations

import os
from pathlib import Path


def read_only(path: str | Path) -> str:
    """Say that a folder (or the nearest existing folder above it) is read-only and why; "" when it is writable."""
    folder = Path(path).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.is_file():
        folder = folder.parent
    try:
        on_read_only_disk = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # statvfs is POSIX only; os.access below still answers
        on_read_only_disk = False
    if on_read_only_disk:
        return f"the folder {folder} is read-only (a read-only file system)"
    if not os.access(folder, os.W_OK):
        return f"the folder {folder} is read-only (no write permission for this user)"
    return ""
