"""Sparse term ids across processes: a salted hash would silently break keyword search of a stored index."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_term_ids_are_the_same_in_every_process() -> None:
    # Stored chunks keep their term ids across runs: a salted hash would silently break keyword search.
    code = "from tools.sparse import encoder; print(encoder().embed_query('nitros').indices)"
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1"}).stdout.strip()
               for seed in ("1", "2")}
    assert len(outputs) == 1 and outputs != {"[]"}
