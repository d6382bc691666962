"""A JSON stub server on 127.0.0.1 for testing real client libraries without their services."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Raw:
    """A body sent as is (HTML, broken JSON, an event stream); `cut_at` closes the connection early."""

    data: bytes
    content_type: str = "application/json"
    cut_at: int | None = None


class JSONStub(BaseHTTPRequestHandler):
    """Reads a JSON body and answers with `reply(body)`; subclasses decide the reply."""

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | Raw]:
        """Return the status and JSON payload (or raw body) for one request."""
        raise NotImplementedError

    def do_POST(self) -> None:  # noqa: N802
        """Answer one POST with the subclass's reply; Retry-After 0 keeps client backoff instant."""
        status, payload = self.reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send(status, payload)

    def send(self, status: int, payload: dict[str, Any] | Raw) -> None:
        """Send a reply; a cut one announces its full length, sends part of it and hangs up."""
        body = payload if isinstance(payload, Raw) else Raw(json.dumps(payload).encode())
        self.send_response(status)
        self.send_header("Content-Type", body.content_type)
        self.send_header("Content-Length", str(len(body.data)))
        self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(body.data[:body.cut_at])
        if body.cut_at is not None:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        """Keep test output quiet."""


@contextmanager
def serve(handler: type[JSONStub]) -> Iterator[str]:
    """Run the stub on a free loopback port and yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
