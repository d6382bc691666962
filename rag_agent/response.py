"""The documented JSON response of a turn, built from the graph's final state (or a failure outside it)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from logic.errors import AgentError, error_reply


def failure(exc: AgentError) -> dict[str, Any]:
    """Describe a failure that happened outside the graph's nodes as a final state."""
    return {"status": "error", "answer": error_reply(exc.code, exc.message),
            "error": {"code": exc.code, "message": exc.message}}


def _rounded(score: float | None) -> float | None:
    """Round a score for the response, keeping None."""
    return None if score is None else round(score, 3)


def response(state: dict[str, Any], thread_id: str, seconds: float) -> dict[str, Any]:
    """Shape a final state as the documented JSON response."""
    error = state.get("error")
    retrieved = state.get("retrieved") or []
    return {
        "thread_id": thread_id,
        "turn_id": state.get("turn_id", ""),
        "timestamp": state.get("timestamp", ""),
        "turn": state.get("turns", sum(isinstance(m, HumanMessage) for m in state.get("messages", []))),
        "status": state.get("status", "error"),
        "answer": state.get("answer", ""),
        "grounded": state.get("status") == "grounded",
        "retrieval_query": state.get("retrieval_query", ""),
        "citations": [
            {k: c[k] for k in ("index", "chunk_id", "source", "source_url", "title", "heading_hierarchy", "text")}
            | {"score": round(c["score"], 3)}
            for c in state.get("citations") or []
        ],
        "retrieved": [{"chunk_id": c["chunk_id"], "source": c["source"], "score": round(c["score"], 3),
                       "relevance": round(c.get("relevance", c["score"]), 3)} for c in retrieved],
        "readings": [{"chunk_id": r["chunk_id"], "answers": r["answers"]} for r in state.get("readings") or []],
        "top_score": _rounded(state.get("top_score")),
        "gate_score": _rounded(state.get("gate_score")),
        "threshold": state.get("threshold"),
        "flagged": bool(state.get("flagged")),
        "flag_reason": state.get("flag_reason") or "",
        "grounding": state.get("grounding"),
        "confidence": state.get("confidence"),
        "not_found": state.get("not_found"),
        "retrieval_cached": bool(state.get("retrieval_cached")),
        "model_used": state.get("model_used", ""),
        "embedding_model": state.get("embedding_model", ""),
        "tokens_used": state.get("tokens_used", 0),
        # The extractive path has no provider usage data; its count is a tokenizer estimate.
        "tokens_estimated": str(state.get("model_used", "")).startswith("extractive"),
        "execution_time_seconds": round(seconds, 3),
        "history_trimmed": bool(state.get("history_trimmed")),
        "error": {"code": error["code"], "message": error["message"]} if error else None,
    }
