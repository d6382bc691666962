"""generate_not_found: say the documentation does not cover the question and show what it does cover."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from graph.state import Chunk, State
from tools.confidence import confidence


def nearest_sections(chunks: list[Chunk], limit: int = 3) -> list[str]:
    """Return up to `limit` distinct section titles from the retrieved chunks, best first."""
    seen: list[str] = []
    for chunk in chunks:
        label = " › ".join([chunk["title"], *chunk["heading_hierarchy"][:1]])
        if label not in seen:
            seen.append(label)
    return seen[:limit]


def generate_not_found(state: State) -> dict[str, Any]:
    """Reply honestly that there is no answer, without inventing one."""
    query = state.get("retrieval_query", "").rstrip("?.! ")
    answer = f"I don't have information about “{query}” in the documentation."
    sections = nearest_sections(state.get("retrieved", []))
    if sections:
        answer += " The closest sections it covers are:\n" + "\n".join(f"- {s}" for s in sections)
    # Confidence that the best section answers after all: low when refusing was right.
    relevances = [c.get("relevance", c["score"]) for c in state.get("retrieved", [])]
    return {"status": "not_found", "grounded": False, "answer": answer, "citations": [],
            "confidence": confidence(state.get("top_score"), state.get("threshold"), relevances),
            "messages": [AIMessage(answer)]}
