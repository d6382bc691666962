"""Choosing the conversation store by URL: memory, SQLite paths, Postgres URLs, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.context import SettingsError
from logic.errors import StorageError
from rag_agent.checkpointers import open_checkpointer, redact
from rag_agent.pg_checkpointer import advisory_key


def test_default_is_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    assert isinstance(open_checkpointer(tmp_path), SqliteSaver)
    assert (tmp_path / "checkpoints.sqlite").is_file()


def test_memory(tmp_path: Path) -> None:
    assert isinstance(open_checkpointer(tmp_path, "memory"), InMemorySaver)


@pytest.mark.parametrize("form", ["{path}", "sqlite:///{path}"])
def test_sqlite_path(tmp_path: Path, form: str) -> None:
    path = tmp_path / "elsewhere" / "memory.db"
    assert isinstance(open_checkpointer(tmp_path / "data", form.format(path=path)), SqliteSaver)
    assert path.is_file()


def test_environment_variable_chooses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_CHECKPOINTER", "memory")
    assert isinstance(open_checkpointer(tmp_path), InMemorySaver)
    assert not (tmp_path / "checkpoints.sqlite").exists()


def test_unknown_scheme_names_the_url(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"RAG_AGENT_CHECKPOINTER.*mysql://db/x"):
        open_checkpointer(tmp_path, "mysql://db/x")


def test_malformed_postgres_url_is_a_setting_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="invalid Postgres URL"):
        open_checkpointer(tmp_path, "postgresql://u@127.0.0.1/db?nonsense_option=1")


def test_unreachable_postgres_names_the_url_without_its_password(tmp_path: Path) -> None:
    # Port 1 on the loopback refuses at once: no server, no network.
    with pytest.raises(StorageError) as excinfo:
        open_checkpointer(tmp_path, "postgresql://agent:s3cret@127.0.0.1:1/db")
    assert "postgresql://agent:***@127.0.0.1:1/db" in excinfo.value.message
    assert "s3cret" not in excinfo.value.message


def test_redact_leaves_password_free_urls_alone() -> None:
    assert redact("postgresql://agent@127.0.0.1/db") == "postgresql://agent@127.0.0.1/db"


def test_advisory_key_is_stable_and_64_bit() -> None:
    key = advisory_key("t1")
    assert key == advisory_key("t1") != advisory_key("t2")
    assert -(2**63) <= key < 2**63
