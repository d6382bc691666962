"""Per-visitor and per-IP rate limits and request size limits for the public (widget) side of the server."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from tools.settings import get_settings

_OFF = {"0", "off", "none", "unlimited"}


class LimitSettingError(ValueError):
    """A rate or size limit setting cannot be read."""


@dataclass(frozen=True)
class Rate:
    """At most `count` requests in any `seconds`-long window."""

    count: int
    seconds: float


def parse_rate(name: str, value: str) -> Rate | None:
    """Read `N/SECONDS` (or `off`), the value of the setting `name`, naming it on error."""
    raw = value.strip().lower()
    if raw in _OFF:
        return None
    count, sep, seconds = raw.partition("/")
    try:
        rate = Rate(int(count), float(seconds))
    except ValueError:
        rate = None
    if not sep or rate is None or rate.count < 1 or rate.seconds <= 0:
        raise LimitSettingError(f"{name} must look like 10/60 (requests per seconds) or off, got {raw!r}")
    return rate


def visitor_rate() -> Rate | None:
    """Return how many runs one visitor may start per window (`RAG_AGENT_RATE_LIMIT_VISITOR`)."""
    return parse_rate("RAG_AGENT_RATE_LIMIT_VISITOR", get_settings().rate_limit_visitor)


def ip_rate() -> Rate | None:
    """Return how many runs, threads and tokens one client IP may ask for per window (`RAG_AGENT_RATE_LIMIT_IP`)."""
    return parse_rate("RAG_AGENT_RATE_LIMIT_IP", get_settings().rate_limit_ip)


class SlidingWindow:
    """Request times per key; a request over the rate is refused with the seconds until a slot frees."""

    # Keys with no recent requests are dropped once this many are tracked, bounding memory.
    PRUNE_AT = 10_000

    def __init__(self) -> None:
        self.hits: dict[str, deque[float]] = {}
        # The server counts off the event loop (a Redis window does network I/O): one request at a time here.
        self.lock = threading.Lock()

    def hit(self, key: str, rate: Rate, now: float | None = None) -> float:
        """Count a request for `key`; return 0 when allowed, else how many seconds to wait."""
        with self.lock:
            return self._hit(key, rate, time.monotonic() if now is None else now)

    def _hit(self, key: str, rate: Rate, now: float) -> float:
        times = self.hits.setdefault(key, deque())
        while times and times[0] <= now - rate.seconds:
            times.popleft()
        if len(times) >= rate.count:
            return max(times[0] + rate.seconds - now, 0.1)
        times.append(now)
        if len(self.hits) > self.PRUNE_AT:
            self._prune(now, rate.seconds)
        return 0.0

    def _prune(self, now: float, seconds: float) -> None:
        for key in [k for k, t in self.hits.items() if not t or t[-1] <= now - seconds]:
            del self.hits[key]


class Window(Protocol):
    """Counts requests per key against a rate: in this process, or in Redis for every replica."""

    def hit(self, key: str, rate: Rate, now: float | None = None) -> float:
        """Count a request for `key`; return 0 when allowed, else how many seconds to wait."""
        ...


def window(kind: str) -> Window:
    """Return the window for one kind of limit: shared through Redis when `RAG_AGENT_REDIS_URL` is set."""
    url = get_settings().redis_url.strip()
    if not url:
        return SlidingWindow()
    from rag_agent.server.web.redis_limits import RedisWindow  # the redis client is loaded only when configured

    return RedisWindow(url, kind, fallback=SlidingWindow())


def slow_down(wait: float) -> str:
    """Return the friendly refusal the widget shows as it is."""
    seconds = max(1, round(wait))
    unit = "second" if seconds == 1 else "seconds"
    return (f"You're asking faster than I can answer. Please wait {seconds} {unit} and try again.")
