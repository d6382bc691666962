"""A JSON stub server on 127.0.0.1 for testing real client libraries without their services."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JSONStub(BaseHTTPRequestHandler):
    """Reads a JSON body and answers with `reply(body)`; subclasses decide the reply."""

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the status and JSON payload for one request."""
        raise NotImplementedError

    def do_POST(self) -> None:  # noqa: N802
        """Answer one POST with the subclass's reply; Retry-After 0 keeps client backoff instant."""
        status, payload = self.reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)

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
