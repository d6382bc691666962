"""The snapshot export writes its vectors batch by batch into the file readers map, whatever the count said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tools import embedded_export, embedded_index, vectorstore


@pytest.mark.parametrize("miscount", [-2, 0, 3])
def test_the_export_holds_every_row_read_even_when_the_count_was_off(data_dir: str, tmp_path: Path,
                                                                     miscount: int) -> None:
    client = vectorstore.open_client(data_dir)
    real = int(client.count("docs").count)

    class Counted:
        count = real + miscount

    def count(_: str, **__: Any) -> Counted:
        """The count a concurrent writer could leave stale between counting and reading."""
        return Counted()

    original = client.count
    client.count = count  # type: ignore[method-assign]
    try:
        folder = embedded_export.export(client, "docs", tmp_path / "copy", hybrid=False)
    finally:
        client.count = original  # type: ignore[method-assign]
    snap = embedded_index.load(folder)
    vectors = np.load(folder / "vectors.npy")
    assert snap.rows == real == vectors.shape[0] and len(snap.offsets) == real + 1
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    hits = embedded_index.search(snap, vectors[real - 1].tolist(), 1)
    assert hits and hits[0][1] == pytest.approx(1.0, abs=1e-5)  # the last row read is the one searched
