"""rag_agent.server.auth: tokens to users, owner tags and filters, off when no keys are configured."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk import Auth

from rag_agent.server import auth


def test_parse_api_keys_maps_tokens_to_users() -> None:
    assert auth.parse_api_keys(" alice:t1, bob:t2 ,") == {"t1": "alice", "t2": "bob"}
    assert auth.parse_api_keys("") == {}


@pytest.mark.parametrize("raw", ["alice", "alice:", ":t1", "alice:t1,bob:t1"])
def test_parse_api_keys_rejects_malformed_entries(raw: str) -> None:
    with pytest.raises(auth.ApiKeyError, match="RAG_AGENT_API_KEYS"):
        auth.parse_api_keys(raw)


def test_bad_key_error_does_not_echo_the_token() -> None:
    with pytest.raises(auth.ApiKeyError) as error:
        auth.parse_api_keys("alice:t1,bob:t1")
    assert "t1" not in str(error.value).replace("alice", "").replace("bob", "")


def test_identify_without_keys_is_the_local_user() -> None:
    assert auth.identify(None, {}) == auth.LOCAL_USER


@pytest.mark.parametrize("header", [None, "", "Bearer", "Basic t1", "Bearer wrong", "t1"])
def test_identify_refuses_missing_or_unknown_tokens(header: str | None) -> None:
    with pytest.raises(Auth.exceptions.HTTPException) as error:
        auth.identify(header, {"t1": "alice"})
    assert error.value.status_code == 401


def test_identify_accepts_a_bearer_token() -> None:
    assert auth.identify("Bearer t1", {"t1": "alice", "t2": "bob"}) == "alice"
    assert auth.identify("bearer  t2 ", {"t1": "alice", "t2": "bob"}) == "bob"


def test_authenticate_reads_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_API_KEYS", "alice:t1")
    assert asyncio.run(auth.authenticate("Bearer t1")) == {"identity": "alice"}
    monkeypatch.delenv("RAG_AGENT_API_KEYS")
    assert asyncio.run(auth.authenticate(None)) == {"identity": auth.LOCAL_USER}


class _User:
    identity = "alice"
    permissions: list[str] = []
    is_authenticated = True
    display_name = "alice"

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


def _ctx(action: str) -> Any:
    return Auth.types.AuthContext(resource="threads", action=action, user=_User(), permissions=[])  # type: ignore[arg-type]


def test_owner_is_forced_on_create_and_used_as_the_filter() -> None:
    metadata = {"owner": "mallory", "topic": "x"}
    value: dict[str, Any] = {"metadata": metadata}
    assert asyncio.run(auth.owner_only(ctx=_ctx("create"), value=value)) == {"owner": "alice"}
    # The very dict the server passed is changed: it stores that object, not the value mapping.
    assert value["metadata"] is metadata and metadata == {"owner": "alice", "topic": "x"}
    read: dict[str, Any] = {"thread_id": "t"}
    assert asyncio.run(auth.owner_only(ctx=_ctx("read"), value=read)) == {"owner": "alice"}
    assert read == {"thread_id": "t"}
