"""The answer as an AI message: Markdown source links in its text, a standard citation annotation on every marker."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage
from langchain_core.messages.content import Citation as CitationBlock
from langchain_core.messages.content import create_citation, create_text_block

from logic.types import Citation

SOURCES_HEADING = "Sources:"
# Characters that would end a Markdown link's text or destination early: escaped or percent-encoded.
_TEXT_SPECIAL = re.compile(r"([\\\[\]])")
_URL_SPECIAL = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E"}


def markdown_link(title: str, url: str) -> str:
    """Return `[title](url)` safe to render as Markdown; just the title when there is no usable link."""
    text = _TEXT_SPECIAL.sub(r"\\\1", " ".join(title.split()))
    if not url:  # safe_url empties a link that is not http(s)
        return text
    return f"[{text}]({''.join(_URL_SPECIAL.get(ch, ch) for ch in url)})"


def _title(citation: Citation) -> str:
    """Name the cited section as its deep link goes: page title › its innermost heading."""
    heading = citation["heading_hierarchy"][-1:]
    return " › ".join([citation["title"], *(h for h in heading if h != citation["title"])]) or citation["source"]


def sources_block(citations: list[Citation]) -> str:
    """Return the list of cited sections as Markdown links, one `[n]` per line, for chat UIs that drop annotations."""
    if not citations:
        return ""
    lines = [f"- [{c['index']}] {markdown_link(_title(c), c['source_url'])}" for c in citations]
    return f"\n\n{SOURCES_HEADING}\n" + "\n".join(lines)


def citation_blocks(answer: str, citations: list[Citation]) -> list[CitationBlock]:
    """Return a citation annotation for every `[n]` marker in the answer, in reading order.

    A citation whose marker is missing still gets one annotation, without a span.
    """
    spans: list[tuple[int, CitationBlock]] = []
    unplaced: list[CitationBlock] = []
    for citation in citations:
        marker = f"[{citation['index']}]"
        # Deep link, the section's name as the reader sees it, and the passage the answer quotes.
        url, title, text = citation["source_url"], _title(citation), citation["text"]
        starts = [m.start() for m in re.finditer(re.escape(marker), answer)]
        spans += [(s, create_citation(url=url, title=title, cited_text=text, start_index=s, end_index=s + len(marker)))
                  for s in starts]
        if not starts:
            unplaced.append(create_citation(url=url, title=title, cited_text=text))
    return [block for _, block in sorted(spans, key=lambda span: span[0])] + unplaced


def cited_text(answer: str, citations: list[Citation]) -> str:
    """Return the message text: the answer with its `[n]` markers, then its sources as Markdown links."""
    return answer + sources_block(citations)


def cited_message(answer: str, citations: list[Citation]) -> AIMessage:
    """Build the AI message: one text block (the answer and its Sources list) annotated on every marker."""
    # Spans are found in the answer only: the Sources list repeats each marker once more.
    block = create_text_block(cited_text(answer, citations), annotations=list(citation_blocks(answer, citations)))
    return AIMessage(content=[dict(block)])
