"""Rate limits counted in Redis (`RAG_AGENT_REDIS_URL`): one allowance per visitor and IP across every replica."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Protocol

import redis

log = logging.getLogger(__name__)

# One sorted set per key, scored by request time; trim, count, then add, atomically on the Redis server.
# The clock is Redis's own (TIME), so replicas with skewed clocks still share one window.
# KEYS[1]: the key; ARGV: count, window in ms, a unique member. Returns 0 (allowed) or the ms to wait.
_HIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= count then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(tonumber(oldest[2]) + window - now, 100)
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return 0
"""
PREFIX = "rag-agent:limit"
# After a failed call, count in this process for this long before trying Redis again: a Redis outage then costs
# one short timeout every few seconds, not one per request (the call blocks the event loop for its duration).
RETRY_AFTER = 5.0
TIMEOUT = 0.25


class Rate(Protocol):
    """At most `count` requests in any `seconds`-long window (limits.Rate)."""

    @property
    def count(self) -> int:
        """Requests allowed per window."""
        ...

    @property
    def seconds(self) -> float:
        """The window's length."""
        ...


class Counter(Protocol):
    """The in-process window (limits.SlidingWindow) used while Redis is down."""

    def hit(self, key: str, rate: Any, now: float | None = None) -> float:
        """Count a request for `key`; return 0 when allowed, else how many seconds to wait."""
        ...


class RedisWindow:
    """The sliding window of `limits.SlidingWindow`, kept in Redis; per-process counts while Redis is down."""

    def __init__(self, url: str, kind: str, fallback: Counter, client: Any = None) -> None:
        self.kind, self.fallback = kind, fallback
        self.client = client or redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
        self.script = self.client.register_script(_HIT)
        self.down_until = 0.0

    def hit(self, key: str, rate: Rate, now: float | None = None) -> float:
        """Count a request for `key`; return 0 when allowed, else how many seconds to wait (`now` is Redis's)."""
        if time.monotonic() >= self.down_until:
            try:
                waited = self.script(keys=[f"{PREFIX}:{self.kind}:{key}"],
                                     args=[rate.count, max(1, round(rate.seconds * 1000)), uuid.uuid4().hex])
                return float(waited) / 1000
            except redis.RedisError as exc:
                self.down_until = time.monotonic() + RETRY_AFTER
                # Limits degrade to per replica rather than refusing every visitor or letting all through.
                log.error("rate limits: Redis unreachable (%s); counting per process for %.0f s",
                          type(exc).__name__, RETRY_AFTER)
        return self.fallback.hit(key, rate)
