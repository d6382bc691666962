"""Fixtures shared by every test folder: the one fake chat model (tests/fakes.py)."""

pytest_plugins = ["tests.fakes"]
