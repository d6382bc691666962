"""The widget the server sends is the bundle of widget/src as it is now (edit the source, then `make widget`)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "rag_agent" / "server" / "web" / "static" / "rag-agent.js"


def test_the_served_widget_was_built_from_the_current_source_and_lockfile() -> None:
    digest = hashlib.sha256()
    for name in ("src/rag-agent.js", "package-lock.json"):
        digest.update((ROOT / "widget" / name).read_bytes())
    banner = re.search(r"source sha256 ([0-9a-f]{64})", BUNDLE.read_text(encoding="utf-8")[:400])
    assert banner, "rag-agent.js has no build banner: run `make widget`"
    assert banner.group(1) == digest.hexdigest(), "widget/src changed since the last build: run `make widget`"


def test_the_bundle_pins_its_markdown_renderer_and_sanitizer() -> None:
    lock = (ROOT / "widget" / "package-lock.json").read_text(encoding="utf-8")
    for package in ("node_modules/markdown-it", "node_modules/dompurify"):
        assert f'"{package}"' in lock and '"integrity": "sha512-' in lock
    text = BUNDLE.read_text(encoding="utf-8")
    assert "DOMPurify" in text and "markdown-it" in text.lower()
