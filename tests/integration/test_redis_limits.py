"""Rate limits in a real Redis (127.0.0.1:6379): one window per visitor however many replicas count it."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

from rag_agent.server.web import limits
from rag_agent.server.web.redis_limits import RedisWindow
from tools.settings import overridden

pytestmark = pytest.mark.integration

REDIS = os.environ.get("RAG_AGENT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def require_redis(url: str = REDIS) -> str:
    """Return the URL of a reachable Redis; skip (or fail, with CI=true) when there is none."""
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but Redis at {url} is unreachable: {exc}")
        pytest.skip(f"Redis rate-limit tests skipped: no server at {url} (set RAG_AGENT_TEST_REDIS_URL, "
                    f"or CI=true to require it)")
    return url


@pytest.fixture
def url() -> Iterator[str]:
    yield require_redis()


def test_two_replicas_share_one_window(url: str) -> None:
    one, two = (RedisWindow(url, "visitor", fallback=limits.SlidingWindow()) for _ in range(2))
    visitor, rate = f"v-{uuid.uuid4().hex}", limits.Rate(3, 60)
    assert [one.hit(visitor, rate), two.hit(visitor, rate), one.hit(visitor, rate)] == [0, 0, 0]
    wait = two.hit(visitor, rate)
    assert 50 < wait <= 60  # the fourth request in a minute waits for the first to leave the window
    assert one.hit(visitor, rate) > 0
    assert one.hit(f"v-{uuid.uuid4().hex}", rate) == 0  # each visitor has its own allowance
    other_kind = RedisWindow(url, "ip", fallback=limits.SlidingWindow())
    assert other_kind.hit(visitor, rate) == 0  # per-IP and per-visitor counts never mix


def test_the_window_slides_and_keys_expire(url: str) -> None:
    import redis

    window, key = RedisWindow(url, "visitor", fallback=limits.SlidingWindow()), f"v-{uuid.uuid4().hex}"
    rate = limits.Rate(1, 0.3)
    assert window.hit(key, rate) == 0 and window.hit(key, rate) > 0
    ttl = redis.Redis.from_url(url).pttl(f"rag-agent:limit:visitor:{key}")
    assert 0 < ttl <= 300  # nothing is kept past its window
    time.sleep(0.5)
    assert window.hit(key, rate) == 0  # the first request has left the window


def test_limits_count_per_process_while_redis_is_down() -> None:
    window = RedisWindow("redis://127.0.0.1:1/0", "visitor", fallback=limits.SlidingWindow())
    rate = limits.Rate(1, 60)
    assert window.hit("v", rate) == 0 and window.hit("v", rate) > 0  # still limited, never an error


def test_the_setting_selects_the_backend(url: str) -> None:
    assert isinstance(limits.window("visitor"), limits.SlidingWindow)  # the default: in this process
    with overridden(redis_url=url):
        assert isinstance(limits.window("visitor"), RedisWindow)
