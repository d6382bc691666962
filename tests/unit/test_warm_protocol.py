"""Which `rag-agent` commands a warm agent may answer, for which data folder, under which settings."""

from __future__ import annotations

import json
import socket
import sys
import threading
from pathlib import Path

import pytest

from rag_agent.cli import warm
from rag_agent.cli import warm_protocol as protocol
from tools.settings import ENV_NAMES, Settings


@pytest.mark.parametrize(("argv", "expected"), [
    (["ask", "What is Isaac Sim?"], True),
    (["--data-dir", "d", "ask", "--json", "q"], True),
    (["--collection", "ask", "chat"], False),  # a collection named "ask", then `chat`
    (["ask", "--context", "notes.txt", "q"], True),
    (["ask", "--context", "-", "q"], False),  # reads the selection from the asker's stdin
    (["ask", "--context=-", "q"], False),  # the same, spelled with "="
    (["ask", "--cont", "-", "q"], False),  # argparse accepts abbreviations
    (["ask", "--co=-", "q"], False),
    (["ask", "--context=notes.txt", "q"], True),
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


def test_a_forwarded_command_that_reads_stdin_fails_at_once_instead_of_hanging_the_agent() -> None:
    # Whatever slips past forwardable(), the warm agent must not wait on its own terminal.
    agent_end, asker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

    def reads_stdin(argv: list[str]) -> int:
        try:
            sys.stdin.read()
        except OSError as exc:
            print(f"refused: {exc}", file=sys.stderr)
            return 2
        return 0

    request = {"argv": ["ask", "q"], "cwd": str(Path.cwd()), "env": protocol.fingerprint(), "tty": [False, False]}
    asker_end.sendall(json.dumps(request).encode() + b"\n")
    served = threading.Thread(target=warm._serve_one, args=(agent_end, reads_stdin), daemon=True)
    served.start()
    served.join(timeout=30)
    assert not served.is_alive(), "the warm agent blocked reading stdin"
    frames = [json.loads(line) for line in asker_end.makefile("rb")]
    assert frames[-1] == {"exit": 2}
    assert "cannot read the asker's stdin" in "".join(f.get("err", "") for f in frames)
    assert sys.stdin is not None and not isinstance(sys.stdin, warm._NoStdin)  # restored after the command
