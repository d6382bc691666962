"""The `rag-agent` entry point: hands `ask` to a warm agent (`rag-agent warm`) when one serves the index.

This module imports only the standard library. A cold `rag-agent ask` spends most of its time importing
LangGraph and LangChain and loading the embedder; a warm agent has done that once, so a script that asks
many questions pays it once. Anything the warm agent cannot serve as this process would runs in-process.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

from rag_agent.cli.warm_protocol import data_dir, fingerprint, forwardable, socket_path

CONNECT_TIMEOUT = 2.0


def forward(argv: list[str]) -> int | None:
    """Run `argv` on the warm agent and return its exit code, or None to run it in this process."""
    if not hasattr(socket, "AF_UNIX") or not hasattr(os, "getuid") or not forwardable(argv):
        return None
    path = socket_path(data_dir(argv))
    if not path.exists():
        return None
    request = {"argv": argv, "cwd": os.getcwd(), "env": fingerprint(),
               "tty": [sys.stdout.isatty(), sys.stderr.isatty()]}
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(CONNECT_TIMEOUT)
        conn.connect(str(path))
        conn.settimeout(None)  # the answer takes as long as the turn's own deadline allows
        conn.sendall(json.dumps(request).encode() + b"\n")
    except OSError:  # a socket left by an agent that was killed: answer here
        return None
    return _relay(conn.makefile("rb"))


def _relay(reader: Any) -> int | None:
    """Copy the warm agent's output frames to stdout/stderr; return its exit code (None: declined)."""
    wrote = False
    for line in reader:
        frame = json.loads(line)
        if "declined" in frame:
            return None
        if "exit" in frame:
            return int(frame["exit"])
        stream = sys.stdout if "out" in frame else sys.stderr
        stream.write(frame.get("out", frame.get("err", "")))
        stream.flush()
        wrote = True
    if not wrote:  # the agent went away before answering: answer here
        return None
    print("rag-agent: the warm agent stopped mid-answer; ask again", file=sys.stderr)
    return 1


def main() -> int:
    """Run the command line, on the warm agent if one can serve it."""
    argv = sys.argv[1:]
    try:
        code = forward(argv)
    except KeyboardInterrupt:
        print("\nrag-agent: cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rag-agent ask … | head -1`, as rag_agent/cli/commands.py handles it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    if code is not None:
        return code
    from rag_agent.cli.commands import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
