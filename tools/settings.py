"""Deployment settings: read from the environment into one typed object; no run can change them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import lru_cache
from typing import Annotated, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from logic.durations import NEVER, parse_duration
from logic.errors import SettingsError

_overrides: dict[str, Any] = {}


class Settings(BaseSettings):
    """What belongs to the deployment, not to a run: paths, services, their keys, memory and logging."""

    model_config = SettingsConfigDict(env_prefix="RAG_AGENT_", extra="ignore", frozen=True)

    data_dir: str = Field(".rag-agent", description="Folder of the local index, manifest and checkpoints.")
    collection: str = Field("docs", min_length=1, description="Collection a run searches unless it names another.")
    collections: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated collections a run may name (RAG_AGENT_COLLECTIONS); empty: `collection` only.")
    checkpointer: str = Field("", description="memory, a SQLite path or postgresql://…; empty: data_dir's SQLite.")
    session_ttl: str = Field("24h", description="Idle time after which a thread starts fresh (30m, 24h, 7d; off).")
    log_level: str = Field("ERROR", description="Log level of the CLI (DEBUG, INFO, WARNING, ERROR).")
    api_keys: SecretStr = Field(SecretStr(""), description="user:token pairs the server accepts (RAG_AGENT_API_KEYS).")
    qdrant_url: str = Field("", validation_alias="QDRANT_URL", description="Qdrant server; empty: the embedded index.")
    qdrant_api_key: SecretStr = Field(SecretStr(""), validation_alias="QDRANT_API_KEY")
    openai_api_key: SecretStr = Field(SecretStr(""), validation_alias="OPENAI_API_KEY",
                                      description="Enables the chat model; without it answers are extractive.")
    openai_base_url: str = Field("", validation_alias="OPENAI_BASE_URL",
                                 description="Any OpenAI-compatible server (vLLM, Ollama, …).")
    cohere_api_key: SecretStr = Field(SecretStr(""), validation_alias="COHERE_API_KEY")
    cohere_base_url: str = Field("", validation_alias="COHERE_BASE_URL")
    langsmith_api_key: SecretStr = Field(SecretStr(""), validation_alias="LANGSMITH_API_KEY",
                                         description="Read by LangSmith itself; here so logs and records mask it.")
    langchain_api_key: SecretStr = Field(SecretStr(""), validation_alias="LANGCHAIN_API_KEY",
                                         description="LangSmith's older name for its key; masked like it.")
    embedder_threads: int = Field(0, ge=0, description="Threads per local embedding call; 0: one per core.")
    reader: bool = Field(True, description="false: the gate and offline answers go without the bundled reading model.")
    reader_model: str = Field("", description="Another reading model (ONNX file); empty: the bundled one.")
    # Turn records (graph/record_stores.py checks `records` so its message names the choices).
    records: str = Field("on", description="on: one record per turn in the conversation database; off: none.")
    records_retention_days: int = Field(90, ge=0, description="Days turn records are kept; 0 keeps them.")
    # The indexer graph (graph/indexer.py).
    index_sources: str = Field("", description="Comma-separated folders and URL prefixes the server may re-index.")
    admins: str = Field("", description="Comma-separated users (from api_keys) who may run the indexer graph.")
    # The server (rag_agent/server/web, rag_agent/server/meta_guard.py, rag_agent/server/visitors.py).
    public_meta: bool = Field(False, description="true: /docs, /openapi.json and /metrics need no token.")
    allowed_origins: str = Field("https://smith.langchain.com",
                                 description="Comma-separated origins whose pages may call the server; * any.")
    trust_proxy: bool = Field(False, description="true: the client IP comes from X-Forwarded-For.")
    rate_limit_visitor: str = Field("10/60", description="Runs one visitor may start per window (count/seconds, off).")
    rate_limit_ip: str = Field("30/60", description="Runs, threads and tokens per client IP (count/seconds, off).")
    runtime_edition: str = Field("inmem", validation_alias="LANGGRAPH_RUNTIME_EDITION",
                                 description="Set by the LangGraph server: inmem under langgraph dev.")
    redis_url: str = Field("", description="redis://… shared by every replica for rate limits; empty: per process.")
    max_body_bytes: int = Field(65_536, ge=1024, description="Largest request body the server reads.")
    visitor_secret: SecretStr = Field(SecretStr(""), description="HMAC key of visitor tokens; empty: data_dir's.")
    visitor_token_days: float = Field(30.0, gt=0, description="How long a visitor token lasts, in days.")
    demo_docs: str = Field("", description="Markdown folder the demo site shows; empty: the project's docs.")
    demo_starters: str = Field(
        "How do I ingest my documentation?|How do I run the agent as a server?|What does the score gate do?",
        description="The demo page's starter questions, separated by |.")
    handoff_url: str = Field("", description="The demo page's hand-off link; empty: none.")
    handoff_label: str = Field("Ask the docs team", description="The hand-off link's text.")

    @field_validator("collections", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """Accept `a,b` from the environment."""
        return [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value

    @field_validator("public_meta", "trust_proxy", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        """Read an empty variable as off, as the server always has."""
        return False if isinstance(value, str) and not value.strip() else value

    @field_validator("embedder_threads", "records_retention_days", "max_body_bytes", "visitor_token_days",
                     mode="before")
    @classmethod
    def _number(cls, value: Any, info: ValidationInfo) -> Any:
        """Read an empty variable as the default, as these settings always have."""
        empty = isinstance(value, str) and not value.strip()
        return cls.model_fields[str(info.field_name)].default if empty else value

    @field_validator("session_ttl")
    @classmethod
    def _duration(cls, value: str) -> str:
        """Refuse a TTL that is neither a duration nor `off` when the settings are read, not mid-turn."""
        if value.strip().lower() not in NEVER:
            try:
                parse_duration(value)
            except SettingsError as exc:  # named once, by the variable, in _parse
                raise ValueError(str(exc).removeprefix("duration: ")) from None
        return value

    @property
    def ttl(self) -> timedelta | None:
        """Return the session TTL, None when threads never expire."""
        return None if self.session_ttl.strip().lower() in NEVER else parse_duration(self.session_ttl)

    @property
    def allowed_collections(self) -> list[str]:
        """Return the collections a run may search."""
        return sorted({self.collection, *self.collections})

    def secrets(self) -> list[str]:
        """Return the configured secret values and URL passwords: what logs and records must never show."""
        # Shorter values would mask ordinary words; a real key or password is longer.
        found = [v.get_secret_value() for v in (getattr(self, n) for n in type(self).model_fields)
                 if isinstance(v, SecretStr) and len(v.get_secret_value()) >= 4]
        for url in (self.openai_base_url, self.qdrant_url, self.checkpointer, self.cohere_base_url, self.redis_url):
            try:
                password = urlsplit(url).password
            except ValueError:
                continue
            if password and len(password) >= 3:
                found += [password, unquote(password)]
        return found

    def shown(self) -> dict[str, str]:
        """Return every setting as text for `rag-agent config`, secrets and URL passwords masked."""
        out: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                out[name] = "***" if value.get_secret_value() else ""
            elif isinstance(value, list):
                out[name] = ",".join(value)
            else:
                out[name] = mask_url(str(value)) if "://" in str(value) else str(value)
        return out


def mask_url(url: str) -> str:
    """Return the URL with any password replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if not parts.password:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# The variables Settings reads: the cache below is keyed on them, so each distinct environment is parsed once.
ENV_NAMES = tuple(
    str(f.validation_alias) if f.validation_alias else f"RAG_AGENT_{name.upper()}"
    for name, f in Settings.model_fields.items()
)


@lru_cache(maxsize=8)
def _parse(environment: tuple[tuple[str, str | None], ...], overrides: tuple[tuple[str, Any], ...]) -> Settings:
    """Build the settings for one environment snapshot."""
    try:
        return Settings(**dict(overrides))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        where = ENV_NAMES[list(Settings.model_fields).index(field)] if field in Settings.model_fields else "settings"
        raise SettingsError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None


def get_settings() -> Settings:
    """Return the deployment settings for the current environment."""
    environment = tuple((name, os.environ.get(name)) for name in ENV_NAMES)
    return _parse(environment, tuple(sorted(_overrides.items())))


@contextmanager
def overridden(**values: Any) -> Iterator[Settings]:
    """Let the operator's own command line (`--data-dir`, `--collection`) set deployment values for a block."""
    global _overrides
    previous = _overrides
    _overrides = {**previous, **{k: v for k, v in values.items() if v is not None}}
    try:
        yield get_settings()
    finally:
        _overrides = previous


def secrets() -> list[str]:
    """Return what logs and records mask; with settings that do not parse, the secret variables as set."""
    try:
        return get_settings().secrets()
    except SettingsError:  # the error about them is logged too: it must still mask the keys
        names = [env for env, f in zip(ENV_NAMES, Settings.model_fields.values(), strict=True)
                 if f.annotation is SecretStr]
        return [value for name in names if len(value := os.environ.get(name, "")) >= 4]
