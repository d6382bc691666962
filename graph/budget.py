"""The turn's time budget: how long a node may still wait for a model or embedding call."""

from __future__ import annotations

import time

from langgraph.config import get_config

from graph.context import Context
from logic.errors import TurnTimeoutError

# The caller sets this per invocation (Agent.ask and Agent.resume), never in state: a resumed turn
# gets a fresh budget instead of one that ran out while the process was dead.
DEADLINE_KEY = "turn_deadline"


def new_deadline(ctx: Context) -> float:
    """Return the wall-clock time by which a turn starting now must end."""
    return time.time() + ctx.turn_timeout


def remaining(ctx: Context) -> float:
    """Return the seconds left in this turn; raise TurnTimeoutError once none are left."""
    try:
        deadline = get_config().get("configurable", {}).get(DEADLINE_KEY)
    except RuntimeError:  # called outside a graph run: no turn to bound
        deadline = None
    if deadline is None:  # a run without a deadline (Studio, a bare graph.invoke): the turn's own limit
        return ctx.turn_timeout
    left = float(deadline) - time.time()
    if left <= 0:
        raise TurnTimeoutError(f"the turn took longer than its {ctx.turn_timeout:g} s limit")
    return left


def call_timeout(ctx: Context, attempts: int, pauses: float = 0.0) -> float:
    """Return a per-attempt timeout: the request timeout, shrunk so every attempt (and `pauses` between them) fits."""
    left = remaining(ctx)
    return min(ctx.request_timeout, max(left - pauses, left / 2) / attempts)
