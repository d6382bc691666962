"""The answer as an AI message whose text block carries LangChain's standard citation annotations."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.messages.content import Citation as CitationBlock
from langchain_core.messages.content import create_citation, create_text_block

from logic.types import Citation


def citation_blocks(answer: str, citations: list[Citation]) -> list[CitationBlock]:
    """Return one citation annotation per cited chunk, spanning its first `[n]` marker in the answer."""
    blocks: list[CitationBlock] = []
    for citation in citations:
        marker = f"[{citation['index']}]"
        start = answer.find(marker)
        # Deep link, the section's name as the reader sees it, and the passage the answer quotes.
        heading = citation["heading_hierarchy"][-1:]
        title = " › ".join([citation["title"], *(h for h in heading if h != citation["title"])]) or citation["source"]
        found = start >= 0
        blocks.append(create_citation(url=citation["source_url"], title=title, cited_text=citation["text"],
                                      start_index=start if found else None,
                                      end_index=start + len(marker) if found else None))
    return blocks


def cited_message(answer: str, citations: list[Citation]) -> AIMessage:
    """Build the AI message: one text block (`.text` is the answer) annotated with its citations."""
    block = create_text_block(answer, annotations=list(citation_blocks(answer, citations)))
    return AIMessage(content=[dict(block)])
