"""Which `rag-agent` commands a warm agent may answer, for which data folder, under which settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_agent import warm_protocol as protocol
from tools.settings import ENV_NAMES, Settings


@pytest.mark.parametrize(("argv", "expected"), [
    (["ask", "What is Isaac Sim?"], True),
    (["--data-dir", "d", "ask", "--json", "q"], True),
    (["--collection", "ask", "chat"], False),  # a collection named "ask", then `chat`
    (["ask", "--context", "notes.txt", "q"], True),
    (["ask", "--context", "-", "q"], False),  # reads the selection from the asker's stdin
    (["chat"], False),
    (["ingest", "docs"], False),
    (["warm"], False),
    ([], False),
])
def test_only_asks_that_need_no_stdin_are_forwarded(argv: list[str], expected: bool) -> None:
    assert protocol.forwardable(argv) is expected


def test_the_data_folder_is_read_as_the_command_line_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_AGENT_DATA_DIR", raising=False)
    assert protocol.data_dir(["ask", "q"]) == Settings.model_fields["data_dir"].default
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", "/srv/index")
    assert protocol.data_dir(["ask", "q"]) == "/srv/index"
    assert protocol.data_dir(["--data-dir", "a", "ask", "--data-dir=b", "q"]) == "b"


def test_each_data_folder_has_its_own_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("very-long-folder-name-" * 12)
    assert protocol.socket_path(deep) != protocol.socket_path(tmp_path)
    assert len(str(protocol.socket_path(deep))) < 100  # AF_UNIX paths are limited to ~104-108 bytes
    assert protocol.socket_path("rel") == protocol.socket_path(Path.cwd() / "rel")


def test_the_fingerprint_covers_every_setting_and_nothing_else() -> None:
    base = {"HOME": "/root", "RAG_AGENT_DATA_DIR": "/a"}
    assert protocol.fingerprint(base) == protocol.fingerprint({"HOME": "/other", "RAG_AGENT_DATA_DIR": "/b"})
    assert protocol.fingerprint(base) != protocol.fingerprint(base | {"RAG_AGENT_TOP_K": "3"})
    assert protocol.fingerprint(base) != protocol.fingerprint(base | {"OPENAI_API_KEY": "sk-1"})
    # A setting read under a name the fingerprint ignores would let a warm agent answer with stale values.
    assert all(name.startswith(protocol.SETTING_PREFIXES) for name in ENV_NAMES)
