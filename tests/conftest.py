"""Fixtures shared by every test folder: the one fake chat model (tests/fakes.py); how xdist splits the suite."""

import pytest
from _pytest.nodeid import coerce_node_id  # pytest 9 (pinned): how a node's id is built from a string

pytest_plugins = ["tests.fakes"]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep tests that share an expensive fixture in one xdist worker, so it is built once.

    Every test on the ingested textbook (a session fixture) shares one group; the other integration and e2e
    tests are grouped by module (their servers and indexes are module fixtures); unit tests spread freely.
    """
    grouping = bool(getattr(config.option, "loadgroup", False))  # set in xdist's workers under --dist loadgroup
    for item in items:
        if "textbook_dir" in getattr(item, "fixturenames", ()):
            group = "textbook"
        elif item.nodeid.startswith(("tests/integration/", "tests/e2e/")):
            group = item.nodeid.split("::", 1)[0]
        else:
            continue
        item.add_marker(pytest.mark.xdist_group(group))
        if grouping:
            # xdist 3.8 names the group by writing `item._nodeid`, which pytest 9 no longer reads (the id lives in
            # `_id`): without this, each worker built the textbook index for itself (two 260 s ingests at once).
            item._id = coerce_node_id(f"{item.nodeid}@{group}")
