"""generate_grounded: answer from the retrieved chunks only, with [n] citations that must exist."""

from __future__ import annotations

import logging
import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from graph.context import Context, resolve_context
from graph.state import Chunk, Citation, State
from nodes.prompts import CANARY, GROUNDED_SYSTEM, format_sources, grounded_user_message
from tools.chat import EXTRACTIVE, chat_available, classify_failure, get_chat_model
from tools.chunking import count_tokens
from tools.errors import LLMBadOutputError, LLMError
from tools.extractive import extract_answer

log = logging.getLogger(__name__)
_MARKER = re.compile(r"\[(\d{1,2})\]")
_URL = re.compile(r"https?://[^\s)\]>\"']+(?<![.,;:!?])")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")
# Tags, comments and script/style blocks; a bare "<" in prose ("a < b") is left alone.
_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>",
                   re.DOTALL | re.IGNORECASE)
EXTRACTIVE_NOTE = "\n\n_(Quoted from the documentation; no language model is configured.)_"
# Chunks scoring this close to the best one are treated as equally relevant sources.
SOURCE_MARGIN = 0.1


def cite(answer: str, chunks: list[Chunk]) -> tuple[str, list[Citation]]:
    """Renumber [n] markers by first use, dropping any that point at no retrieved chunk."""
    order: list[int] = []
    for match in _MARKER.finditer(answer):
        n = int(match.group(1))
        if 1 <= n <= len(chunks) and n not in order:
            order.append(n)
    new = {old: i + 1 for i, old in enumerate(order)}

    def renumber(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{new[n]}]" if n in new else ""

    citations: list[Citation] = [
        {**chunks[old - 1], "index": new[old], "text": chunks[old - 1]["text"][:500]} for old in order
    ]
    return re.sub(r" {2,}", " ", _MARKER.sub(renumber, answer)).strip(), citations


def strip_foreign_urls(answer: str, chunks: list[Chunk]) -> str:
    """Remove URLs that are not a retrieved chunk's source (a foreign link keeps only its text)."""
    allowed = {c["source_url"].split("#")[0] for c in chunks}

    def ok(url: str) -> bool:
        return url.split("#")[0] in allowed

    answer = _MD_LINK.sub(lambda m: m.group(0) if ok(m.group(2)) else m.group(1), answer)
    return _URL.sub(lambda m: m.group(0) if ok(m.group(0)) else "", answer)


def clean(answer: str, chunks: list[Chunk]) -> str:
    """Enforce answer hygiene whatever the model wrote: no images, no raw HTML, no foreign URLs."""
    answer = _HTML.sub("", _IMAGE.sub("", answer))
    return re.sub(r"[ \t]{2,}", " ", strip_foreign_urls(answer, chunks)).strip()


def _terminate(sentence: str) -> str:
    """End a bullet-point fragment with a full stop so stitched sentences read as prose."""
    return sentence if sentence.endswith((".", "!", "?", "\n")) else sentence + "."


def _relevance(chunk: Chunk) -> float:
    """Return the chunk's ranking score, or its cosine when it was not re-ranked."""
    return chunk.get("relevance", chunk["score"])


def _extractive(query: str, chunks: list[Chunk]) -> tuple[str, int]:
    """Stitch the best-matching sentences into an answer with [n] markers."""
    picked = extract_answer(query, [c["text"] for c in chunks])
    answer = " ".join(f"{_terminate(sentence)} [{rank + 1}]" for rank, sentence in picked)
    tokens = sum(count_tokens(c["text"]) for c in chunks) + count_tokens(answer)
    return answer, tokens


def _llm(query: str, chunks: list[Chunk], ctx: Context) -> tuple[str, int]:
    """Ask the chat model for a grounded answer; failures are raised as classified LLMErrors."""
    model = get_chat_model(ctx.chat_model, temperature=ctx.temperature, max_tokens=ctx.max_tokens,
                           timeout=ctx.request_timeout)
    sources = format_sources([(i + 1, c["title"], c["text"]) for i, c in enumerate(chunks)])
    try:
        # Raw tokens could carry what hygiene removes (foreign URLs, HTML, a leaked prompt), so they are
        # not streamed; a `messages` stream receives the cleaned answer when the node returns.
        reply = model.invoke([SystemMessage(GROUNDED_SYSTEM), HumanMessage(grounded_user_message(query, sources))],
                             config={"tags": ["nostream"]})
    except Exception as exc:  # the SDK has already retried what is retryable
        raise classify_failure(exc, ctx.chat_model, ctx.request_timeout) from exc
    usage = getattr(reply, "usage_metadata", None) or {}
    text = reply.content if isinstance(reply.content, str) else ""
    if CANARY in text:
        raise LLMBadOutputError("the model's reply repeated its hidden instructions and was withheld")
    if not text.strip():
        raise LLMBadOutputError("the model returned an empty reply")
    return ("" if text.strip() == "NOT_FOUND" else text), int(usage.get("total_tokens", 0))


def generate_grounded(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer and its citations; an answer without a valid citation falls to not-found."""
    ctx = resolve_context(runtime.context)
    retrieved = state.get("retrieved", [])
    # Chunks arrive in ranked order; quote those ranked about as high as the first one.
    top = _relevance(retrieved[0]) if retrieved else 0.0
    query = state.get("retrieval_query", "")
    if chat_available():
        try:
            raw, tokens = _llm(query, retrieved, ctx)
        except LLMError as exc:
            log.warning("chat model failed: %s (%r)", exc.message, exc.__cause__)
            return {"error": {"code": exc.code, "message": exc.message, "node": "generate_grounded"}}
        sources, model_used = retrieved, ctx.chat_model
    else:
        sources = [c for c in retrieved if _relevance(c) >= top - SOURCE_MARGIN][:3]
        (raw, tokens), model_used = _extractive(query, sources), EXTRACTIVE
    answer, citations = cite(clean(raw, sources), sources)
    if not citations:
        return {"citations": [], "model_used": model_used, "tokens_used": tokens}
    if not chat_available():
        source = "your selection" if state.get("context") else "the documentation"
        answer += EXTRACTIVE_NOTE.replace("the documentation", source)
    return {
        "status": "grounded",
        "answer": answer,
        "citations": citations,
        "model_used": model_used,
        "tokens_used": tokens,
        "messages": [AIMessage(answer)],
    }
