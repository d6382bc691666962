"""The HTML report as a person sees it: rendered by headless Chromium, its charts drawn in their colours."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from PIL import Image

from rag_agent.reporting.report import build
from rag_agent.reporting.report_html import COLORS, render
from tools.embeddings import HashEmbeddings
from tools.records import RecordStore

pytestmark = pytest.mark.e2e
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _store(path: Path) -> RecordStore:
    """A store with answered, flagged, refused and failed turns over three days."""
    store, now = RecordStore(str(path)), time.time()
    asks = [("grounded", 0, "What is Isaac Sim?"), ("grounded", 1, "How do I tune physics?"),
            ("not_found", 0, "How much does Unity Pro cost?"), ("error", 0, "")]
    for i in range(40):
        status, flagged, question = asks[i % len(asks)]
        finished = now - (i % 3) * 86400 - i
        store.record_turn({"turn_id": f"t{i}", "thread_id": f"th{i}", "started_at": finished - 0.5,
                           "finished_at": finished, "question": question, "standalone_query": question,
                           "status": status, "flagged": flagged, "model": "m", "embedder": "hash/256",
                           "tokens": 10, "latency_ms": 300.0 + i, "index_version": "v", "retrieved": 1,
                           "sources": [{"title": "Isaac Sim › Setup", "source_url": "isaac.md#setup", "score": 0.5}]})
    store.record_feedback("t2", -1, "Prices please")
    return store


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        message = "HTML report rendering test skipped: no chromium (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    store = _store(tmp_path / "records.sqlite")
    page = tmp_path / "report.html"
    page.write_text(render(build(store, 7 * 86400, HashEmbeddings(256).embed_documents)), encoding="utf-8")
    store.close()
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    f"--screenshot={shot}", "--window-size=1200,2000", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    with Image.open(shot) as image:
        colours = {rgb for _, rgb in image.convert("RGB").getcolors(maxcolors=1 << 20) or []}
    # The outcome bar, trend and gap charts are drawn: each outcome's colour is on the screen.
    for name in ("answered", "flagged", "not_found", "error"):
        hex_colour = COLORS[name].lstrip("#")
        assert tuple(int(hex_colour[i:i + 2], 16) for i in (0, 2, 4)) in colours, name
