"""One-time loading before a process's first turn: the embedder and the index, outside any turn's deadline."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from graph.context import Context
from tools.settings import get_settings

# Loading quicker than this goes unannounced: a note on every fast start would be noise.
ANNOUNCE_AFTER = 1.0
MESSAGE = "loading the embedder…"


def announce() -> None:
    """Tell the person at the terminal why the first answer is slow to start."""
    print(MESSAGE, file=sys.stderr, flush=True)


def load(context: Context, announce: Callable[[], None] | None = None) -> None:
    """Load the embedder the turn will use and open the index, calling `announce` if it takes over a second.

    Failures are left for the turn itself to report, with its error code: loading here only moves the
    time spent out of the turn's deadline (a first turn on a busy machine used to end in TURN_TIMEOUT).
    """
    from tools import manifest, search, vectorstore
    from tools.embeddings import get_embeddings, resolve_name

    timer = threading.Timer(ANNOUNCE_AFTER, announce) if announce else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        get_embeddings(resolve_name(context.embedding_model))
        data_dir = get_settings().data_dir
        info = manifest.load_cached(data_dir)["collections"].get(context.collection)
        if info and get_settings().qdrant_url:
            vectorstore.open_client(data_dir)
        elif info:  # a turn reads the embedded snapshot, never Qdrant: opened here
            search.snapshot(data_dir, context.collection, manifest.retrieval_mode(info))
    except Exception:  # the turn reports it (EMBEDDING_UNAVAILABLE, STORAGE_ERROR…) with its code
        pass
    finally:
        if timer:
            timer.cancel()
