"""Parse fetched HTML in worker processes that can be stopped: a page's parse is bounded in time and memory.

BeautifulSoup and markdownify have no limits of their own: 300k nested inline tags or a 4.5 MB table
took minutes and gigabytes in-process, past any deadline. Here each parse runs in a child process
with an address-space cap, and is killed when the page's (or the crawl's) time is up. A worker
serves many pages, so the normal path pays one process start per fetch thread, not one per page.
"""

from __future__ import annotations

import json
import os
import resource
import select
import struct
import subprocess
import sys
import threading
import time
from typing import IO

PARSE_MAX_BYTES = 512 * 2**20  # a worker's address space: a 5 MB docs page peaks near 210 MB of it
_HEADER = struct.Struct(">II")  # two lengths: the page URL, then the HTML (or one length and 0 for a reply)


class ParseLimitError(RuntimeError):
    """A page whose parse ran past its time or memory limit; the worker was stopped."""


def _serve() -> None:
    """Worker loop: read (URL, HTML) frames on stdin, answer each with a JSON frame on stdout."""
    from tools.webpage import html_to_markdown  # imported before the cap: the libraries are not the page

    resource.setrlimit(resource.RLIMIT_AS, (PARSE_MAX_BYTES, PARSE_MAX_BYTES))
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while header := source.read(_HEADER.size):
        url_size, html_size = _HEADER.unpack(header)
        url, html = source.read(url_size).decode(), source.read(html_size)
        try:
            markdown, links = html_to_markdown(html, url)
            reply = json.dumps({"markdown": markdown, "links": links}).encode()
        except MemoryError:
            reply = json.dumps({"error": "MemoryError"}).encode()
            html = b""
        except Exception as exc:  # a page the parser chokes on is an answer, not the end of the worker
            reply = json.dumps({"error": type(exc).__name__}).encode()
        sink.write(_HEADER.pack(len(reply), 0) + reply)
        sink.flush()


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tools.htmlworker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(self, url: str, html: bytes, deadline: float) -> dict[str, object]:
        """Send one page and wait for its answer until `deadline` (time.monotonic()); raise TimeoutError after."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        encoded = url.encode()
        self.proc.stdin.write(_HEADER.pack(len(encoded), len(html)) + encoded + html)
        self.proc.stdin.flush()
        size, _ = _HEADER.unpack(_read(self.proc.stdout, _HEADER.size, deadline))
        answer: dict[str, object] = json.loads(_read(self.proc.stdout, size, deadline))
        return answer

    def stop(self) -> None:
        """Kill the process and reap it."""
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


def _read(pipe: IO[bytes], size: int, deadline: float) -> bytes:
    """Read exactly `size` bytes from a pipe by `deadline`; TimeoutError past it, EOFError if it closes."""
    chunks, left, fd = [], size, pipe.fileno()
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the parser process ended")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class ParserPool:
    """Worker processes shared by the fetch threads; one that overran its limit is killed, never reused."""

    def __init__(self) -> None:
        self.idle: list[_Worker] = []
        self.lock = threading.Lock()

    def parse(self, html: bytes, url: str, deadline: float) -> tuple[str, list[str]]:
        """Return the page's Markdown and links, parsed by `deadline`; ParseLimitError past the limits."""
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        worker = worker or _Worker()
        try:
            answer = worker.ask(url, html, deadline)
        except (TimeoutError, EOFError, OSError, ValueError) as exc:
            worker.stop()
            if isinstance(exc, TimeoutError):
                raise ParseLimitError("parsing took longer than the time left to the page") from None
            raise ParseLimitError(f"the parser stopped ({type(exc).__name__})") from None
        if answer.get("error") == "MemoryError":
            worker.stop()  # a worker that ran out of memory may be in any state
            raise ParseLimitError(f"parsing needed more than {PARSE_MAX_BYTES // 2**20} MB")
        with self.lock:
            self.idle.append(worker)
        if "error" in answer:
            raise ValueError(str(answer["error"]))
        return str(answer["markdown"]), [str(link) for link in answer["links"]]  # type: ignore[attr-defined]

    def close(self) -> None:
        """Stop every idle worker."""
        with self.lock:
            workers, self.idle = self.idle, []
        for worker in workers:
            worker.stop()


if __name__ == "__main__":
    _serve()
