"""Owner-based access for the LangGraph server: each thread belongs to the user whose token created it.

Named users: with `RAG_AGENT_API_KEYS` set (e.g. `alice:s3cret,bob:hunter2`) every request needs
`Authorization: Bearer <token>`, threads and runs are tagged with `metadata.owner`, and a user only
sees, runs and deletes their own threads. With it unset a request without a token is the user `local`.
Anonymous visitors (the widget) carry a signed visitor token (rag_agent/server/visitors.py) whatever the
keys say: each is its own owner, may only use threads and runs, and may not change run settings.
"""

from __future__ import annotations

import asyncio
import hmac
from datetime import UTC, datetime
from typing import Any, cast

from langgraph_sdk import Auth

from rag_agent.logs import install_redaction
from rag_agent.server import visitor_policy as policy
from rag_agent.server import visitors
from rag_agent.server.key_strength import refuse_weak_keys
from tools.settings import get_settings

# Without keys configured every request is this user, so Studio and the SDK work with no token.
LOCAL_USER = "local"

auth = Auth()
# The server loads this module at start-up: from then on keys, URL credentials and the prompt canary are
# masked in every log record it writes (httpx logs each request's URL at INFO).
install_redaction()
# The Agent Server (not `langgraph dev`) refuses to start with a placeholder or short token (docs/deploy.md).
refuse_weak_keys(get_settings().api_keys.get_secret_value())

# Crons run the agent unattended (model and embedding calls every time): at most hourly, in seconds.
MIN_CRON_INTERVAL = 3600

# Actions whose value carries metadata that is stored with the thread, run, assistant or cron.
_WRITES = frozenset({"create", "update", "create_run", "copy"})


class ApiKeyError(ValueError):
    """`RAG_AGENT_API_KEYS` is malformed."""


def parse_api_keys(raw: str) -> dict[str, str]:
    """Parse `user:token,user:token` into {token: user}, naming the bad entry on error."""
    keys: dict[str, str] = {}
    for number, entry in enumerate((part.strip() for part in raw.split(",")), start=1):
        if not entry:
            continue
        user, sep, token = entry.partition(":")
        user, token = user.strip(), token.strip()
        if not sep or not user or not token:
            # Named by position, not content: the entry may be a bare token.
            raise ApiKeyError(f"RAG_AGENT_API_KEYS entry {number} must look like user:token")
        if visitors.looks_like_visitor_token(token):
            raise ApiKeyError(f"RAG_AGENT_API_KEYS entry {number}: tokens starting with "
                              f"{visitors.PREFIX}. are reserved for visitor tokens")
        if token in keys:
            raise ApiKeyError(f"RAG_AGENT_API_KEYS gives users {keys[token]!r} and {user!r} the same token")
        keys[token] = user
    return keys


def identify(authorization: str | None, keys: dict[str, str]) -> str:
    """Return the user a bearer token belongs to; raise 401 for a missing or unknown token."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() == "bearer" and visitors.looks_like_visitor_token(token.strip()):
        visitor = visitors.verify(token.strip())
        if visitor is None:
            raise Auth.exceptions.HTTPException(status_code=401, detail="visitor token expired or invalid")
        return visitor.identity
    if not keys:
        return LOCAL_USER
    if scheme.lower() != "bearer" or not token.strip():
        raise Auth.exceptions.HTTPException(status_code=401, detail="send Authorization: Bearer <token>")
    token = token.strip()
    # Compare against every key in constant time, so response timing does not reveal a prefix match.
    user = None
    for known, owner in keys.items():
        if hmac.compare_digest(known.encode(), token.encode()):
            user = owner
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown API token")
    return user


def shortest_gap(schedule: str, runs: int = 200) -> int | None:
    """Return the shortest time in seconds between two runs of a cron schedule (None if it does not parse)."""
    from croniter import croniter  # the server's own dependency: this module is only loaded by the server

    try:
        times = croniter(schedule, datetime(2025, 1, 1, tzinfo=UTC))
        fires = [times.get_next(float) for _ in range(runs)]
    except (ValueError, KeyError, TypeError):  # an invalid schedule: the server refuses it with its own 422
        return None
    return int(min(b - a for a, b in zip(fires, fires[1:], strict=False)))


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Map the request's bearer token to a user; keys are re-read so a restart is not needed."""
    keys = parse_api_keys(get_settings().api_keys.get_secret_value())
    if visitors.looks_like_visitor_token((authorization or "").strip().partition(" ")[2].strip()):
        await asyncio.to_thread(visitors.secret)  # file I/O the first time only, never on the event loop
    return {"identity": identify(authorization, keys)}


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """Tag what a user creates with them as owner, and show them only what they own."""
    owner = ctx.user.identity
    if policy.is_visitor(owner):
        policy.check(ctx.resource, ctx.action, value)
    if ctx.action == "create_run":
        await _check_run_for_user(owner, value.get("kwargs") or {})
    if ctx.action in _WRITES:
        # In place: the server keeps its own reference to this dict, so a replacement would be lost.
        # Overwrites any owner the client sent, so nobody can create or re-tag a thread as someone else's.
        metadata = value.get("metadata")
        if isinstance(metadata, dict):
            metadata["owner"] = owner
        else:
            value["metadata"] = {"owner": owner}
    return {"owner": owner}


def is_admin(identity: str) -> bool:
    """Tell whether a user is an admin: named in RAG_AGENT_ADMINS, or `local` on a server without keys."""
    settings = get_settings()
    if identity == LOCAL_USER and not settings.api_keys.get_secret_value().strip():
        return True
    return identity in {a.strip() for a in settings.admins.split(",") if a.strip()}


async def _check_run_for_user(identity: str, kwargs: dict[str, Any]) -> None:
    """Refuse admin-only stream modes to everyone else, and webhooks to non-public addresses to everyone."""
    refused = policy.stream_modes(kwargs.get("stream_mode")) & policy.ADMIN_STREAM_MODES
    if refused and not is_admin(identity):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"stream_mode {', '.join(sorted(refused))} is for admins only: it carries the "
                                    "prompts and the model's raw output")
    if kwargs.get("webhook"):
        problem = await policy.webhook_problem(kwargs["webhook"])
        if problem:
            raise Auth.exceptions.HTTPException(status_code=403, detail=problem)


def _own_or_system(ctx: Auth.types.AuthContext) -> dict[str, Any]:
    """Match a user's own assistants and the server's (the `agent` assistant it creates has no owner)."""
    return {"$or": [{"owner": ctx.user.identity}, {"created_by": "system"}]}


@auth.on.assistants.read
async def read_assistants(ctx: Auth.types.AuthContext, value: Auth.types.AssistantsRead) -> dict[str, Any]:
    """Show a user their own assistants and the server's, never another user's."""
    return _own_or_system(ctx)


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Auth.types.AssistantsSearch) -> dict[str, Any]:
    """List a user's own assistants and the server's, never another user's."""
    return _own_or_system(ctx)


async def _own_assistant(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
    """Tag an assistant with its owner and drop any claim to be the server's own."""
    owned = await owner_only(ctx, value)
    value["metadata"].pop("created_by", None)  # owner_only made sure metadata is a dict
    return owned


@auth.on.assistants.create
async def create_assistant(ctx: Auth.types.AuthContext, value: Auth.types.AssistantsCreate) -> dict[str, str]:
    """Tag a new assistant with its owner; a client cannot pass it off as the server's own."""
    return await _own_assistant(ctx, cast(dict[str, Any], value))


@auth.on.assistants.update
async def update_assistant(ctx: Auth.types.AuthContext, value: Auth.types.AssistantsUpdate) -> dict[str, str]:
    """Let a user change only their own assistants (the server's stays as deployed)."""
    return await _own_assistant(ctx, cast(dict[str, Any], value))


@auth.on.crons.create
async def create_cron(ctx: Auth.types.AuthContext, value: Auth.types.CronsCreate) -> dict[str, str]:
    """Refuse schedules that run more often than `MIN_CRON_INTERVAL`; the cron belongs to its creator."""
    gap = shortest_gap(str(value.get("schedule") or ""))
    if gap is not None and gap < MIN_CRON_INTERVAL:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"crons may run at most once every {MIN_CRON_INTERVAL // 60} minutes; "
                                    f"this schedule runs every {max(1, gap // 60)} minute(s)")
    return await owner_only(ctx, cast(dict[str, Any], value))


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Allow only store namespaces that start with the user's name (the graph itself uses no store)."""
    namespace = tuple(value.get("namespace") or ())
    if policy.is_visitor(ctx.user.identity):
        raise Auth.exceptions.HTTPException(status_code=403, detail="visitors cannot use the store")
    if not namespace or namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(status_code=403, detail="store namespaces start with your user name")
