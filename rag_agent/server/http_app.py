"""The ASGI app `langgraph.json` mounts beside the LangGraph API (`http.app`): its middleware wraps every route.

Routes: the chat widget, the demo site, visitor tokens and feedback (rag_agent/server/web/app.py). Middleware,
outermost first: the CORS allow-list, rate and size limits, the token check on the API docs and metrics, and
the visitor allow-list and admin-only parts (rag_agent/server/visitor_policy.py, applied by
rag_agent/server/web/surface.py), then MCP tool results as JSON structured content (rag_agent/server/web/mcp.py).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from rag_agent.server.meta_guard import MetaGuard
from rag_agent.server.web.app import lifespan, routes
from rag_agent.server.web.mcp import McpResults
from rag_agent.server.web.middleware import Guard, OriginGate
from rag_agent.server.web.surface import SurfaceGate

app = Starlette(routes=routes, middleware=[Middleware(OriginGate), Middleware(Guard), Middleware(MetaGuard),
                                           Middleware(SurfaceGate), Middleware(McpResults)], lifespan=lifespan)
