"""The feedback endpoint: a visitor rates an answer of their own (thumbs up/down, optional comment).

Ratings are stored per turn by rag_agent/records.py in the deployment's conversation database; only
the owner of the thread a turn belongs to may rate it or read its ratings back.
"""

from __future__ import annotations

from typing import Any

import httpx
from langgraph_sdk import Auth, get_client
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from logic.errors import InvalidInputError
from rag_agent import records
from rag_agent.server.auth import identify, parse_api_keys
from tools.settings import get_settings

MAX_COMMENT = 2000


def _who(request: Request) -> str:
    """Return the requester's identity, as the API's own auth would name them."""
    return identify(request.headers.get("authorization"), parse_api_keys(get_settings().api_keys.get_secret_value()))


async def _owner_of(thread_id: str) -> str | None:
    """Return the owner recorded on a thread, or None when there is no such thread."""
    client = get_client(url=None, api_key=None)  # in-process: no network hop, no auth of its own
    try:
        thread = await client.threads.get(thread_id)
    except httpx.HTTPStatusError:
        return None
    return str((thread.get("metadata") or {}).get("owner", ""))


async def _owned_turn(request: Request, turn_id: str) -> dict[str, Any] | Response:
    """Return the turn record when the requester owns its thread, else the error response to send."""
    try:
        identity = _who(request)
    except Auth.exceptions.HTTPException as exc:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
    turn = await run_in_threadpool(records.open_store().turn, turn_id) if turn_id else None
    # The same answer for "no such turn" and "not yours": a guessed id reveals nothing.
    if not turn or await _owner_of(str(turn.get("thread_id", ""))) != identity:
        return JSONResponse({"detail": f"no answer {turn_id!r} of yours to rate"}, status_code=404)
    return turn


async def post(request: Request) -> Response:
    """Store a rating (+1/-1, or "up"/"down") with an optional comment for one of the requester's turns."""
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than the parser's stack
        body = None
    if not isinstance(body, dict):
        return JSONResponse({"detail": "send JSON: {\"turn_id\": ..., \"rating\": \"up\" or \"down\", "
                                       "\"comment\": optional text}"}, status_code=400)
    comment = body.get("comment")
    if isinstance(comment, str) and len(comment) > MAX_COMMENT:
        return JSONResponse({"detail": f"the comment is {len(comment)} characters; at most {MAX_COMMENT}"},
                            status_code=413)
    turn = await _owned_turn(request, str(body.get("turn_id") or ""))
    if isinstance(turn, Response):
        return turn
    try:
        rating: Any = body.get("rating")  # checked by record_feedback, which names a bad value
        stored = await run_in_threadpool(records.record_feedback, turn["turn_id"], rating, comment)
    except InvalidInputError as exc:
        return JSONResponse({"detail": exc.message}, status_code=400)
    return JSONResponse({"feedback": stored}, status_code=201)


async def get(request: Request) -> Response:
    """Return the ratings stored for one of the requester's turns (`?turn_id=`)."""
    turn = await _owned_turn(request, request.query_params.get("turn_id", ""))
    if isinstance(turn, Response):
        return turn
    rows = await run_in_threadpool(records.open_store().feedback)
    mine = [r for r in rows if r.get("turn_id") == turn["turn_id"]]
    return JSONResponse({"turn_id": turn["turn_id"], "feedback": mine})
