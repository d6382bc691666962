"""The ASGI app `langgraph.json` mounts beside the LangGraph API (`http.app`): its middleware wraps every route.

Routes: the chat widget, the demo site, visitor tokens and feedback (rag_agent/web/app.py). Middleware,
outermost first: the CORS allow-list, rate and size limits, and the token check on the API docs and metrics.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from rag_agent.meta_guard import MetaGuard
from rag_agent.web.app import lifespan, routes
from rag_agent.web.middleware import Guard, OriginGate

app = Starlette(routes=routes, middleware=[Middleware(OriginGate), Middleware(Guard), Middleware(MetaGuard)],
                lifespan=lifespan)
