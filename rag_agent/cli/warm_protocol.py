"""What `rag-agent ask` and a warm agent (`rag-agent warm`) agree on: where it listens, whom it serves.

Standard library only: the asking side (rag_agent/cli/launch.py) must start in milliseconds, before
tools/settings.py could be imported, so this module reads the environment itself, for two things only:
the data folder (to find the socket) and a digest of the settings variables (to match the agent's).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

# The variables a run's settings come from (tools/settings.py, graph/context.py): a warm agent started
# under other values would answer with another configuration, so it declines.
# LANGGRAPH_RUNTIME_EDITION: the Agent Server's edition, which decides whether weak API tokens are refused.
SETTING_PREFIXES = ("RAG_AGENT_", "QDRANT_", "OPENAI_", "COHERE_", "LANGSMITH_", "LANGCHAIN_",
                    "LANGGRAPH_RUNTIME_EDITION")


def fingerprint(environ: Mapping[str, str] | None = None) -> str:
    """Return a digest of the variables that configure a run (default: this process's), but the data folder."""
    # The data folder is left out: it is the socket's own key (socket_path).
    items = sorted((k, v) for k, v in (os.environ if environ is None else environ).items()
                   if k.startswith(SETTING_PREFIXES) and k != "RAG_AGENT_DATA_DIR")
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


def socket_path(data_dir: str | Path) -> Path:
    """Return where the warm agent of a data folder listens (a short path: AF_UNIX allows ~100 bytes)."""
    key = hashlib.sha256(str(Path(data_dir).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"rag-agent-{os.getuid()}" / f"{key}.sock"


def data_dir(argv: list[str]) -> str:
    """Return the data folder the command line names (last --data-dir wins, as argparse does)."""
    found = os.environ.get("RAG_AGENT_DATA_DIR", "").strip() or ".rag-agent"
    for i, arg in enumerate(argv):
        if arg == "--data-dir" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--data-dir="):
            found = arg.partition("=")[2]
    return found


def reads_stdin(argv: list[str]) -> bool:
    """Return whether any argument may name stdin: `-` alone or as an option's `=` value, in any spelling."""
    # argparse takes `--context -`, `--context=-` and abbreviations (`--cont -`, `--co=-`) alike: any "-"
    # value is taken as stdin rather than guessing which option it belongs to. A question that is "-"
    # or ends in "=-" is answered in-process too, which costs only the start-up time.
    return any(a == "-" or a.endswith("=-") for a in argv)


def forwardable(argv: list[str]) -> bool:
    """Return whether the command is an `ask` that reads nothing from this process's stdin."""
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] not in
                                                                          ("--data-dir", "--collection"))]
    return bool(words) and words[0] == "ask" and not reads_stdin(argv)
