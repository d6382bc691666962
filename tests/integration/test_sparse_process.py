"""BM25 indices across processes: a salted or changed hash would silently break search of a stored index."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.unit.test_sparse import ARM, ROBOT
from tools.sparse import index_of

pytestmark = pytest.mark.integration


def test_indices_are_the_same_in_every_process() -> None:
    # Stored chunks keep their indices across runs: a salted or changed hash would silently break search.
    assert (index_of("robot"), index_of("arm")) == (ROBOT, ARM)
    code = "from tools.sparse import index_of; print(index_of('nitros'))"
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2")}
    assert outputs == {"2405369518"}
