"""Durations as people write them (30m, 24h, 7d), the clock, and idle times rendered compactly."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from logic.errors import SettingsError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
NEVER = frozenset({"off", "never", "0"})


def utcnow() -> datetime:
    """Return the current time in UTC (the one clock seam for tests)."""
    return datetime.now(UTC)


def parse_duration(text: str, name: str = "duration", *, allow_zero: bool = False) -> timedelta:
    """Parse `30m`, `24h`, `7d` (also s and w) into a timedelta, naming `name` on a bad value."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) < 0 or (float(match.group(1)) == 0 and not allow_zero):
        least = "a number" if allow_zero else "a positive number"
        raise SettingsError(f"{name}: invalid duration {text!r}; use {least} and a unit, e.g. 30m, 24h, 7d")
    return timedelta(**{_UNITS[match.group(2).lower()]: float(match.group(1))})


def format_idle(delta: timedelta) -> str:
    """Render an idle time compactly, e.g. 3d4h, 2h5m, 40s."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    return f"{minutes}m{seconds}s" if minutes else f"{seconds}s"
