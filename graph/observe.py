"""Structured per-node log lines: thread, node, duration and error code, never message text."""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from langgraph.config import get_config

log = logging.getLogger("rag_agent.turn")


def _thread_id() -> str:
    """Return the thread of the running graph, or '-' outside one."""
    try:
        thread = str(get_config().get("configurable", {}).get("thread_id", "-"))
    except RuntimeError:
        return "-"
    return re.sub(r"[^\w.:-]", "?", thread)[:128]  # a crafted id cannot forge log lines


def logged(node: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Wrap a node so each call logs one key=value line (functools.wraps keeps the `runtime` parameter)."""

    @functools.wraps(node)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        start, code = time.perf_counter(), "-"
        try:
            update = node(*args, **kwargs)
            code = (update.get("error") or {}).get("code", "-") if isinstance(update, dict) else "-"
            return update
        except BaseException as exc:  # a crash or a kill still gets its line; the exception goes on
            code = type(exc).__name__
            raise
        finally:
            log.info("node thread=%s node=%s ms=%d error=%s", _thread_id(), node.__name__,
                     (time.perf_counter() - start) * 1000, code)

    return run
