"""Opening a Qdrant server by URL (QDRANT_URL); the embedded default never opens Qdrant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.settings import get_settings

if TYPE_CHECKING:  # imported by connect(): a turn on the embedded index never opens Qdrant
    from qdrant_client import QdrantClient


def connect(url: str) -> QdrantClient:
    """Create a client of the server at `url`, with the configured API key and a bounded timeout."""
    from qdrant_client import QdrantClient

    return QdrantClient(url=url, api_key=get_settings().qdrant_api_key.get_secret_value() or None, timeout=10)
