"""The ASGI app `langgraph.json` mounts beside the LangGraph API (`http.app`): widget, demo, tokens, feedback.

Its middleware wraps the whole server, so the CORS allow-list and the rate and size limits also cover
the API's own routes (threads, runs). Add further routes (e.g. MCP helpers) to `routes` below.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from rag_agent.server import visitors
from rag_agent.server.web import demo, feedback
from rag_agent.server.web.middleware import Guard, OriginGate

log = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {"rag-agent.js": "text/javascript; charset=utf-8", "rag-agent.css": "text/css; charset=utf-8"}
WIDGET_URL = "/widget/rag-agent.js"


async def asset(request: Request) -> Response:
    """Serve a widget file; short caching, so a redeploy reaches visitors within minutes."""
    name = request.path_params["name"]
    if name not in ASSETS:
        return JSONResponse({"detail": f"no widget file {name}"}, status_code=404)
    return FileResponse(STATIC / name, media_type=ASSETS[name], headers={"cache-control": "public, max-age=300"})


async def token(request: Request) -> Response:
    """Issue a visitor token; a still-valid one sent back is renewed for the same visitor."""
    try:
        body: Any = await request.json() if await request.body() else {}
    except (ValueError, RecursionError):  # not JSON, or nested too deeply: a fresh visitor
        body = {}
    old = visitors.verify(str(body.get("token", ""))) if isinstance(body, dict) else None
    signed, visitor = await run_in_threadpool(visitors.issue, None, old.visitor_id if old else None)
    return JSONResponse({"token": signed, "visitor": visitor.identity, "expires": visitor.expires,
                         "expires_in": int(visitor.expires - time.time())}, headers={"cache-control": "no-store"})


async def demo_page(request: Request) -> Response:
    """Render a page of the demo docs with the widget on it."""
    page = await run_in_threadpool(demo.render, request.url.path, WIDGET_URL)
    if page is None:
        return HTMLResponse("<h1>Not found</h1><p>No such page in the demo docs. <a href='/demo/'>Start here</a>.</p>",
                            status_code=404)
    return HTMLResponse(page)


async def demo_root(request: Request) -> Response:
    """Send /demo to the docs' index page."""
    return RedirectResponse("/demo/", status_code=307)


routes = [
    Route("/widget/token", token, methods=["POST"]),
    Route("/widget/feedback", feedback.post, methods=["POST"]),
    Route("/widget/feedback", feedback.get, methods=["GET"]),
    Route("/widget/{name}", asset, methods=["GET"]),
    Route("/demo", demo_root, methods=["GET"]),
    Route("/demo/{path:path}", demo_page, methods=["GET"]),
]

@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Read (or create) the visitor secret once, off the event loop, before the first request."""
    await run_in_threadpool(visitors.secret)
    yield


# Listed outermost first: CORS headers reach the limits' 429 and 413 replies too. rag_agent/server/http_app.py, the
# app langgraph.json mounts, uses these routes with the same middleware (plus the API docs guard).
app = Starlette(routes=routes, middleware=[Middleware(OriginGate), Middleware(Guard)], lifespan=lifespan)
