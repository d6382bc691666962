"""Files that must not be indexed as they are: binaries named .md, symlinks out of the folder, bad encodings."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.hostile import run_cli
from tools import embedded_index


def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "lidar.md").write_text("# Lidar\n\nA lidar measures distance with laser pulses.\n")
    (docs / "image.md").write_bytes(bytes(range(256)) * 40)  # a PNG renamed, in spirit
    (docs / "photo.md").write_bytes(os.urandom(4096).replace(b"\x00", b"\x01"))  # binary without NUL bytes
    outside = tmp_path / "secret.txt"
    outside.write_text("# Secret\n\nThe deploy password is hunter2.\n")
    (docs / "leak.md").symlink_to(outside)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "more.md").write_text("# Elsewhere\n\nOutside the ingested folder.\n")
    (docs / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (docs / "inside.md").symlink_to(docs / "guide" / "lidar.md")  # inside the folder: fine
    (docs / "cafe.md").write_bytes("# Café\n\nThe café sells robot coffee.\n".encode("latin-1"))
    return docs


def test_binaries_outside_links_and_bad_encodings_are_reported_not_indexed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = run_cli(data, "ingest", str(folder(tmp_path)), "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["added"] == 3  # guide/lidar.md, inside.md, cafe.md
    assert "binary" in report["skipped"]["image.md"] and "binary" in report["skipped"]["photo.md"]
    assert "outside the folder" in report["skipped"]["leak.md"]
    assert "not followed" in report["skipped"]["linked"]
    assert "UTF-8" in report["problems"]["cafe.md"] and "line 1, byte offset 5" in report["problems"]["cafe.md"]
    snap = embedded_index.current(data, "docs")
    assert snap is not None
    points = [snap.document(r) for r in range(snap.rows)]
    text = " ".join(f"{p.page_content} {p.metadata}" for p in points)
    assert {p.metadata["source"] for p in points} == {"guide/lidar.md", "inside.md", "cafe.md"}
    assert "hunter2" not in text and "Elsewhere" not in text

    plain = run_cli(data, "ingest", str(folder(tmp_path / "again")))
    assert plain.returncode == 0
    assert "skipped image.md: binary" in plain.stderr
    assert "warning: cafe.md: not valid UTF-8" in plain.stderr
