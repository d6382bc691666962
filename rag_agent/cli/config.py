"""`rag-agent config`: what the configuration in use means, then the deployment settings object itself."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graph.context import Context
from rag_agent.cli.output import EXIT_OK
from rag_agent.logs import mask_url
from tools.settings import get_settings


def add_command(sub: Any) -> None:
    """Add `config` to the command line."""
    config = sub.add_parser("config", help="show the settings in use and why")
    config.add_argument("--json", action="store_true", help="print the settings as one JSON object")


def describe(ctx: Context) -> dict[str, str]:
    """Say which provider, store and threshold this configuration uses, and why."""
    from tools import manifest
    from tools.chat import chat_available
    from tools.embeddings import resolve_name

    embedder = resolve_name(ctx.embedding_model)
    if ctx.embedding_model:
        why_embedder = "set by RAG_AGENT_EMBEDDING_MODEL"
    elif embedder.startswith("cohere/"):
        why_embedder = "COHERE_API_KEY is set"
    else:
        why_embedder = "no COHERE_API_KEY: the bundled local model"
    settings = get_settings()
    info = manifest.load(settings.data_dir)["collections"].get(ctx.collection)
    value, how = manifest.resolve_threshold(ctx.score_threshold, info, embedder)
    qdrant, base_url = mask_url(settings.qdrant_url), mask_url(settings.openai_base_url)
    return {
        "chat": (f"{ctx.chat_model} (OPENAI_API_KEY is set"
                 + (f", OPENAI_BASE_URL={base_url})" if base_url else ")")
                 if chat_available() else "extractive answers (no OPENAI_API_KEY)"),
        "embeddings": f"{embedder} ({why_embedder})",
        "vector_store": f"Qdrant server {qdrant} (QDRANT_URL)" if qdrant
        else f"embedded snapshots in {Path(settings.data_dir, 'embedded').resolve()} (no QDRANT_URL)",
        "collection": ctx.collection + (f" ({info['chunks']} chunks)" if info else " (not ingested yet)"),
        "data_dir": str(Path(settings.data_dir).resolve()),
        "score_threshold": f"{value} ({how})",
        "top_k": str(ctx.top_k),
        "retrieval": manifest.retrieval_mode(info) + " (stored with the index)" if info
        else f"{manifest.DEFAULT_RETRIEVAL} (default for a new index)",
    }


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Print the configuration in use: what it means, then the deployment settings object itself (secrets masked)."""
    summary, deployment = describe(ctx), get_settings().shown()
    if args.json:
        print(json.dumps({**summary, "settings": deployment}))
    else:
        for key, value in summary.items():
            print(f"{key:16} {value}")
        print("\ndeployment settings (environment; never set per run):")
        for key, value in deployment.items():
            print(f"  {key:16} {value}")
    return EXIT_OK
