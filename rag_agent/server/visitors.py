"""Anonymous visitor tokens: each browser gets its own signed identity, so it sees only its own threads.

A token is `rav1.<visitor id>.<expiry>.<signature>`, the signature an HMAC-SHA256 over the rest with a
deployment secret: `RAG_AGENT_VISITOR_SECRET`, or one generated once and kept in the data folder.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tools.settings import get_settings

PREFIX = "rav1"
SECRET_FILE = "visitor-secret"
MIN_SECRET = 32


class VisitorSecretError(ValueError):
    """The configured visitor secret is unusable."""


@dataclass(frozen=True)
class Visitor:
    """A verified anonymous visitor."""

    visitor_id: str
    expires: int

    @property
    def identity(self) -> str:
        """The owner name threads are tagged with."""
        return f"visitor:{self.visitor_id}"


@lru_cache(maxsize=4)
def _secret_for(configured: str, data_dir: Path) -> bytes:
    """Return the configured secret, else the data folder's, creating it (owner-only) on first use."""
    if configured:
        if len(configured) < MIN_SECRET:
            raise VisitorSecretError(f"RAG_AGENT_VISITOR_SECRET must be at least {MIN_SECRET} characters long")
        return configured.encode()
    path = data_dir / SECRET_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    try:  # O_EXCL: two workers starting together agree on one secret instead of overwriting each other's
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip().encode()
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32))
    return path.read_text(encoding="ascii").strip().encode()


def secret() -> bytes:
    """Return the deployment's visitor secret."""
    settings = get_settings()
    return _secret_for(settings.visitor_secret.get_secret_value(), Path(settings.data_dir))


def _sign(payload: str, key: bytes) -> str:
    digest = hmac.new(key, payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(now: float | None = None, visitor_id: str | None = None) -> tuple[str, Visitor]:
    """Sign a token for a new (or the given) visitor; return it with the visitor it names."""
    days = get_settings().visitor_token_days
    visitor = Visitor(visitor_id or secrets.token_urlsafe(12), int((now or time.time()) + days * 86400))
    payload = f"{PREFIX}.{visitor.visitor_id}.{visitor.expires}"
    return f"{payload}.{_sign(payload, secret())}", visitor


def looks_like_visitor_token(token: str) -> bool:
    """Tell a visitor token from a named user's API key without checking it."""
    return token.startswith(PREFIX + ".")


def verify(token: str, now: float | None = None) -> Visitor | None:
    """Return the visitor a token names, or None when it is malformed, forged or expired."""
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != PREFIX or not parts[2].isdigit():
        return None
    payload = ".".join(parts[:3])
    if not hmac.compare_digest(_sign(payload, secret()), parts[3]):
        return None
    visitor = Visitor(parts[1], int(parts[2]))
    return visitor if visitor.expires > (now or time.time()) else None
