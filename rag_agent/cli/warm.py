"""`rag-agent warm`: keep one agent loaded so each `rag-agent ask` on its index starts in milliseconds.

The warm agent listens on a Unix socket only its user can reach (rag_agent/cli/warm_protocol.py names it), runs each
forwarded `ask` through the same command line as a cold process would, one at a time, and streams the
output back. It declines a request whose settings variables differ from its own; the asker then answers
in-process. It stops after `--idle-minutes` without a question, or on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import signal
import socket
import stat
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from graph.context import Context
from logic.errors import InvalidInputError
from rag_agent.cli import warm_protocol as protocol
from tools.settings import get_settings

log = logging.getLogger("rag_agent.warm")
REQUEST_TIMEOUT = 10.0


def add_command(sub: Any) -> None:
    """Add `warm` to the command line."""
    warm = sub.add_parser("warm", help="keep an agent loaded so `ask` on this index starts at once")
    warm.add_argument("--idle-minutes", type=float, default=30.0, metavar="M",
                      help="stop after M minutes without a question (default 30)")


class _Frames(io.TextIOBase):
    """A text stream that sends each write to the asker as one JSON line; a gone asker is ignored."""

    def __init__(self, sink: BinaryIO, key: str, tty: bool) -> None:
        self._sink, self._key, self._tty, self.gone = sink, key, tty, False

    def write(self, text: str) -> int:
        """Send `text` (the turn goes on, silently, if the asker pressed Ctrl-C)."""
        if text and not self.gone:
            try:
                self._sink.write(json.dumps({self._key: text}).encode() + b"\n")
                self._sink.flush()
            except OSError:
                self.gone = True
        return len(text)

    def isatty(self) -> bool:
        """Answer as the asker's own stream would (the CLI prints progress notes only to a terminal)."""
        return self._tty

    def writable(self) -> bool:
        """Say the stream takes writes."""
        return True


class _NoStdin(io.TextIOBase):
    """The stdin a forwarded command sees: reading fails at once (the asker's stdin never reaches the agent)."""

    def read(self, size: int | None = -1) -> str:
        """Refuse: waiting on the agent's own stdin would hang it and every ask queued behind."""
        raise OSError("a warm agent cannot read the asker's stdin; pass a file, or stop `rag-agent warm`")

    readline = read  # type: ignore[assignment]

    def readable(self) -> bool:
        """Say the stream is meant for reads (each of which fails)."""
        return True


class _Stopped(BaseException):
    """SIGTERM arrived: stop serving, even in the middle of a command."""


def _stop(*_: object) -> None:
    """End the serving loop from the SIGTERM handler."""
    raise _Stopped


def _private_folder(folder: Path) -> None:
    """Create the socket's folder for this user alone, refusing one another user could write to."""
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise InvalidInputError(f"{folder} must be a folder only you can open (mode 700); remove it and retry")


def _listen(path: Path) -> socket.socket:
    """Bind the socket, replacing one left by an agent that died; refuse if another agent serves it."""
    _private_folder(path.parent)
    if path.exists():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink()
        else:
            raise InvalidInputError(f"a warm agent already serves this index (socket {path})")
        finally:
            probe.close()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o600)
    server.listen(16)
    return server


def _same_user(conn: socket.socket) -> bool:
    """Return whether the asker runs as this user (Linux tells; elsewhere the private folder guards it)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    uid: int = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
    return uid == os.getuid()


def _serve_one(conn: socket.socket, command: Callable[[list[str]], int]) -> None:
    """Answer one forwarded command on `conn` by running it through `command` (the CLI's main)."""
    sink = conn.makefile("wb")
    try:
        conn.settimeout(REQUEST_TIMEOUT)  # an asker that connects and says nothing must not hold the agent
        request = json.loads(conn.makefile("rb").readline() or b"{}")
        conn.settimeout(None)
        argv = request.get("argv")
        if (not _same_user(conn) or request.get("env") != protocol.fingerprint()
                or not isinstance(argv, list) or not protocol.forwardable(argv)):
            sink.write(b'{"declined": true}\n')
            return
        os.chdir(request["cwd"])  # relative --context files resolve where the asker stands
        tty = request.get("tty") or [False, False]
        out, err = _Frames(sink, "out", bool(tty[0])), _Frames(sink, "err", bool(tty[1]))
        stdin, sys.stdin = sys.stdin, _NoStdin()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = command([str(a) for a in argv])
                except SystemExit as exc:  # argparse's usage errors
                    code = exc.code if isinstance(exc.code, int) else 2
        finally:
            sys.stdin = stdin
        if not out.gone:
            sink.write(json.dumps({"exit": code}).encode() + b"\n")
    except (OSError, ValueError, KeyError) as exc:  # a malformed request or a gone asker: the next one is served
        log.warning("warm agent: request dropped: %s", exc)
    finally:
        with contextlib.suppress(OSError):
            sink.close()
        conn.close()


def run(args: argparse.Namespace, ctx: Context, command: Callable[[list[str]], int]) -> int:
    """Load the agent, then serve forwarded `ask` commands through `command` until idle for --idle-minutes."""
    from rag_agent.service import Agent

    if not hasattr(socket, "AF_UNIX") or not hasattr(os, "getuid"):
        raise InvalidInputError("`rag-agent warm` needs Unix sockets, which this system lacks")
    if args.idle_minutes <= 0:
        raise InvalidInputError("--idle-minutes must be above 0")
    data_dir = get_settings().data_dir
    # Nothing the agent runs may wait on its terminal: a read of fd 0 ends at once instead of hanging.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    with Agent(ctx) as agent:
        agent.load()  # the embedder and the index, once
    path = protocol.socket_path(data_dir)
    server = _listen(path)
    cwd = os.getcwd()
    # SIGTERM (kill, a service manager) ends the loop through `finally`, so the socket is removed. Not
    # SystemExit: a command being served catches that (argparse's usage errors) and the loop would go on.
    signal.signal(signal.SIGTERM, _stop)
    print(f"rag-agent warm: serving `rag-agent ask` on {Path(data_dir).resolve()} (socket {path}); "
          f"stops after {args.idle_minutes:g} idle minutes or Ctrl-C", file=sys.stderr, flush=True)
    server.settimeout(args.idle_minutes * 60)
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                print("rag-agent warm: idle, stopping", file=sys.stderr)
                return 0
            _serve_one(conn, command)
            os.chdir(cwd)
    except _Stopped:
        return 0
    finally:
        server.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
