"""The `indexer` graph: the incremental ingest, run on the server for a folder or site the deployment allows.

Served beside `agent` (langgraph.json), so an admin can re-index from the SDK, Studio or a nightly
cron. Two settings guard it: `RAG_AGENT_INDEX_SOURCES` (comma-separated folders and URL prefixes the
server may index; nothing else) and `RAG_AGENT_ADMINS` (the named users who may run it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NotRequired

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from graph.context import Context, resolve_context
from logic import allowlist, urls
from logic.errors import InvalidInputError
from tools.settings import get_settings

SOURCES_ENV = "RAG_AGENT_INDEX_SOURCES"
ADMINS_ENV = "RAG_AGENT_ADMINS"
# The user a server without RAG_AGENT_API_KEYS gives every request (rag_agent/server/auth.py's LOCAL_USER).
LOCAL_USER = "local"


class IndexInput(TypedDict):
    """What an admin sends: the source to re-index and how, as `rag-agent ingest` takes it."""

    source: str
    base_url: NotRequired[str]
    include: NotRequired[list[str]]
    exclude: NotRequired[list[str]]
    recreate: NotRequired[bool]


class IndexOutput(TypedDict, total=False):
    """What changed, as `rag-agent ingest` prints it."""

    collection: str
    added: int
    updated: int
    removed: int
    unchanged: int
    failed: dict[str, str]
    skipped: dict[str, str]
    embedded: int
    chunks: int
    warnings: list[str]
    seconds: float
    # A site's pages: downloaded, re-embedded, and not downloaded as unchanged (sitemap lastmod, HTTP 304).
    fetched: int
    changed: int
    unchanged_lastmod: int
    unchanged_304: int


class IndexState(IndexInput, IndexOutput):
    """Input and report together."""


# A ValueError, not PermissionError: the server shows a ValueError's message to the caller and hides others.
class NotAllowedError(ValueError):
    """The caller may not re-index, or the source is not on the deployment's allow-list."""


# A ValueError too, so the server shows the caller what to send; INVALID_INPUT for everyone else.
class IndexInputError(InvalidInputError, ValueError):
    """The run's input is not an indexer request (e.g. a chat `{"messages": […]}` sent to this graph)."""


def check_input(state: IndexState) -> None:
    """Refuse an input without a text `source` (or with mistyped options), naming the field and what to send."""
    source = state.get("source")
    if source is None:  # the input schema drops other keys, so a chat message arrives as nothing
        raise IndexInputError("the indexer's input has no 'source' field: send {\"source\": \"<folder path or "
                              "site/sitemap URL>\"}; questions go to the `agent` graph, not `indexer`")
    if not isinstance(source, str):
        raise IndexInputError(f"the indexer's 'source' field must be text, not {type(source).__name__}")
    for name, kind in (("base_url", str), ("include", list), ("exclude", list), ("recreate", bool)):
        if state.get(name) is not None and not isinstance(state.get(name), kind):
            raise IndexInputError(f"the indexer's {name!r} field must be {kind.__name__}")


def check_admin(config: RunnableConfig) -> None:
    """Refuse a server run by anyone not in RAG_AGENT_ADMINS; a plain Python call (no server user) may run."""
    configurable = config.get("configurable") or {}
    if "langgraph_auth_user_id" not in configurable:
        return  # Not through the server: the caller already has the files and the index.
    user = str(configurable["langgraph_auth_user_id"])
    settings = get_settings()
    admins = set(allowlist.parse(settings.admins))
    # A server without API keys makes everyone `local`: the developer's own `langgraph dev`.
    open_dev = user == LOCAL_USER and not settings.api_keys.get_secret_value().strip()
    if user not in admins and not open_dev:
        raise NotAllowedError(f"user {user!r} may not re-index: only the users in {ADMINS_ENV} may")


def check_source(source: str) -> str:
    """Return the source to ingest if the deployment allows it; a clear error otherwise."""
    entries = allowlist.parse(get_settings().index_sources)
    if not source.strip():
        raise InvalidInputError("source is empty: send a folder path or a site/sitemap URL")
    if not entries:
        raise NotAllowedError(f"re-indexing from the server is off: set {SOURCES_ENV} to the folders and "
                              "site URLs it may index")
    if allowlist.is_url(source):
        if allowlist.url_allowed(source, entries):
            return source
    else:
        roots = [Path(entry).resolve() for entry in entries if not allowlist.is_url(entry)]
        # Resolved, so `..` and symlinks cannot step outside an allowed folder.
        if allowlist.path_allowed(Path(source).resolve(), list(roots)):
            return str(Path(source).resolve())
    shown = [urls.strip_credentials(entry) for entry in entries]  # an error is shown: never with a password
    raise NotAllowedError(f"{urls.strip_credentials(source)!r} is not in {SOURCES_ENV} ({', '.join(shown)})")


def index(state: IndexState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Check who asks and what for, then run the incremental ingest into the agent's collection."""
    from tools import pagecache
    from tools.crawl import Fetcher
    from tools.embeddings import get_embeddings, resolve_name
    from tools.ingest import Settings, ingest
    from tools.sources import collect

    check_input(state)
    check_admin(get_config())
    source = check_source(state["source"])
    ctx, settings = resolve_context(runtime.context), Settings(progress=False)
    data_dir, recreate = Path(get_settings().data_dir), bool(state.get("recreate", False))
    # A rebuild fetches every page; otherwise pages unchanged since the last run are skipped or fetched conditionally.
    known = {} if recreate else pagecache.load(data_dir, ctx.collection,
                                               pagecache.chunking(settings.chunk_tokens, settings.chunk_overlap))
    found = collect(source, state.get("base_url", ""), state.get("include", []), state.get("exclude", []),
                    Fetcher(), progress=False, known=known)
    name = resolve_name(ctx.embedding_model)
    shown = urls.strip_credentials(source)  # the manifest and the thread's checkpoint keep no password
    report = ingest(found, data_dir=data_dir, collection=ctx.collection, embeddings=get_embeddings(name),
                    embedding_model=name, recreate=recreate, source_root=shown, settings=settings)
    return {"source": shown, "collection": ctx.collection, "added": report.added, "updated": report.updated,
            "removed": report.removed, "unchanged": report.unchanged, "failed": report.failed,
            "skipped": report.skipped, "embedded": report.embedded, "chunks": report.chunks,
            "warnings": report.warnings, "seconds": round(report.seconds, 2), "fetched": report.fetched,
            "changed": report.changed, "unchanged_lastmod": report.unchanged_lastmod,
            "unchanged_304": report.unchanged_304}


def build_indexer() -> StateGraph[IndexState, Context, IndexInput, IndexOutput]:
    """One node: the ingest is a single step with its own incremental bookkeeping."""
    builder = StateGraph(IndexState, context_schema=Context, input_schema=IndexInput, output_schema=IndexOutput)
    builder.add_node("index", index)
    builder.add_edge(START, "index")
    builder.add_edge("index", END)
    return builder


# For the LangGraph server (langgraph.json `indexer`).
graph = build_indexer().compile(name="indexer")
