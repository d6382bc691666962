"""The ASGI app `langgraph.json` mounts beside the LangGraph API (`http.app`): its middleware wraps every route."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from rag_agent.meta_guard import MetaGuard

app = Starlette(middleware=[Middleware(MetaGuard)])
