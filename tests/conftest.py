"""Fixtures shared by every test folder: the one fake chat model (tests/fakes.py); how xdist splits the suite."""

import pytest

pytest_plugins = ["tests.fakes"]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep tests that share an expensive fixture in one xdist worker, so it is built once.

    Every test on the ingested textbook (a session fixture) shares one group; the other integration and e2e
    tests are grouped by module (their servers and indexes are module fixtures); unit tests spread freely.
    """
    for item in items:
        if "textbook_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("textbook"))
        elif item.nodeid.startswith(("tests/integration/", "tests/e2e/")):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
