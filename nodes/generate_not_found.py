"""generate_not_found: say the documentation does not cover the question and show what it does cover."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from graph.state import Chunk, State


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
    return {"status": "not_found", "grounded": False, "answer": answer, "citations": [],
            "messages": [AIMessage(answer)]}
