"""generate_grounded: answer from the retrieved chunks only, with [n] citations that must exist.

It writes every reply that is not a refusal or a failure, so the short fixed replies to chit-chat and
/reset are written here too (see `canned`): generate_not_found stays "no answer, and why", which the docs
team counts as a gap, and error_handler stays "something failed".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph.budget import call_timeout, remaining
from graph.context import Context, resolve_context
from graph.state import State
from logic.annotations import cited_message
from logic.answer_stream import AnswerStream, Emit, StreamedAnswer
from logic.canary import CANARY
from logic.chunking import count_tokens
from logic.confidence import answer_confidence, flag_reason
from logic.echo import PromptEcho
from logic.errors import AgentError, IndexMissingError, LLMBadOutputError, RetrievalError, TurnTimeoutError
from logic.extractive import SECTION_PATH, extract_answer, render
from logic.grounding import Check, check_lexical, check_with_judge, without_claims
from logic.heuristics import asked_question, canned_reply
from logic.hygiene import cite, clean, neutralize, to_chunk
from logic.injection import without_instructions
from logic.not_found import hedge, sections
from logic.notes import after, before
from logic.selection import asked_terms, own_headings, sums_up
from logic.types import Chunk, Citation, NotFound
from logic.verdict import ANSWER_SCHEMA, VerdictReader
from nodes.message_stream import MessageStream
from nodes.prompts import format_sources, grounded_user_message
from tools import chat, search
from tools.chat import (
    CHAT_BACKOFF,
    CHAT_RETRIES,
    EXTRACTIVE,
    classify_failure,
    load_client,
)
from tools.embedded_index import passage_vectors
from tools.embeddings import get_embeddings, resolve_name
from tools.lexicon_store import load as load_lexicon
from tools.sentence_store import cosines
from tools.settings import get_settings

log = logging.getLogger(__name__)
EXTRACTIVE_NOTE = "\n\n_(Quoted from the documentation; no language model is configured.)_"
# An offline answer this unsure (its confidence, a calibrated probability that it holds what was asked) opens by
# saying the quote is the nearest the documentation comes. On the four tuning sites 11 answers fell below 0.6:
# 5 of the 11 near misses the gate let through, 1 answer missing what was asked, 5 right ones (docs/benchmarks.md).
HEDGE_BELOW = 0.6
# The reading model read the best passages (only when its verdict could refuse) and found none likely to answer:
# on the five sites of benchmarks/sites.py (npm held out) answers it read below 0.2 held what was asked a third
# of the time, above 0.8 nearly always. Such an answer is hedged and its confidence kept below HEDGE_BELOW.
READ_DOUBT, DOUBTED = 0.2, 0.5
# Chunks scoring this close to the best one are treated as equally relevant sources.
SOURCE_MARGIN = 0.1
# Measured on the sites benchmark (docs/benchmarks.md): at least two sections to quote from lifted keyword
# recall on one site (0.64 → 0.72) and moved no other; three quoted more off-topic sections.
MIN_SOURCES = 2


def _relevance(chunk: Chunk) -> float:
    """Return the chunk's ranking score, or its cosine when it was not re-ranked."""
    return chunk.get("relevance", chunk["score"])


def quoted_sources(retrieved: list[Chunk]) -> list[Chunk]:
    """Return the ranked chunks an extractive answer quotes from: up to three near the first, at least two."""
    top = _relevance(retrieved[0]) if retrieved else 0.0
    # Chunks arrive in ranked order; quote those ranked about as high as the first one, and never fewer
    # than two: the first may lead by its page's strength while the next section holds the answer.
    sources = [c for c in retrieved if _relevance(c) >= top - SOURCE_MARGIN][:3]
    return sources if len(sources) >= MIN_SOURCES else retrieved[:MIN_SOURCES]


def _similarity(ctx: Context) -> Callable[[str, list[str]], list[float]] | None:
    """Return the local embedder's cosine between a question and candidate texts; None for other embedders."""
    name = resolve_name(ctx.embedding_model)
    if not name.startswith("local/"):  # Cohere would be a paid call per answer; a hash embedder knows no meaning
        return None
    embeddings = get_embeddings(name)
    settings = get_settings()
    # Ingest stored the passages' vectors with the snapshot (tools/sentence_store.py): a turn embeds only what
    # it lacks. The query's vector is retrieve's, which the embedder keeps. A Qdrant server has no snapshot.
    store = None if settings.qdrant_url else passage_vectors(settings.data_dir, ctx.collection, name)

    def similarity(query: str, texts: list[str]) -> list[float]:
        return cosines(embeddings, store, query, texts)
    return similarity


def _read_doubts(state: State) -> bool:
    """Tell whether the reading model read the best passages and judged that none answers."""
    readings = state.get("readings") or []
    return bool(readings) and readings[0]["answers"] < READ_DOUBT


def _extractive(query: str, chunks: list[Chunk], ctx: Context) -> tuple[str, int]:
    """Quote the passages that best answer the query, with [n] markers."""
    # Instruction-like sentences are data about the page, never something to quote as an answer.
    picked = extract_answer(query, [without_instructions(c["text"]) for c in chunks], similarity=_similarity(ctx),
                            headings=[SECTION_PATH.join(own_headings(c)) for c in chunks], follows=follows(chunks))
    answer = render(picked)
    tokens = sum(count_tokens(c["text"]) for c in chunks) + count_tokens(answer)
    return answer, tokens


def read_on(ctx: Context, sources: list[Chunk]) -> list[Chunk]:
    """Return the sources with the page's next chunk after the first one, when its section goes on there.

    Chunking cuts a section where its size runs out, not where its argument does: the sentence that answers often
    follows the one that matched ("…is not defined" / "it can be fixed by … `model_rebuild()`"). The answerer reads
    that chunk after the first (`follows`) and quotes from it only when its units score best; its passages' vectors
    are in the snapshot like every chunk's, so reading it costs a lookup. A selection's parts have no place on a page.
    """
    first = sources[0] if sources else None
    if first is None or "chunk_index" not in first:
        return sources
    place = (first["source"], first["chunk_index"] + 1)
    if any((c["source"], c.get("chunk_index")) == place for c in sources):
        return sources
    try:
        found = search.chunks_at(get_settings().data_dir, ctx.collection, [place]).get(place)
    except (RetrievalError, IndexMissingError) as exc:  # the sources retrieved still make the answer
        log.warning("could not read on into the next chunk: %s", exc)
        return sources
    if not found or list(found.get("heading_hierarchy") or []) != first["heading_hierarchy"]:
        return sources
    return [*sources, to_chunk(found, first["score"])]


def follows(chunks: list[Chunk]) -> list[int | None]:
    """Return, for each chunk, the position of the chunk it goes on from (its page's previous one, same section)."""
    at = {(c["source"], c["chunk_index"]): i for i, c in enumerate(chunks) if "chunk_index" in c}
    before = [at.get((c["source"], c["chunk_index"] - 1)) if "chunk_index" in c else None for c in chunks]
    return [b if b is not None and chunks[b]["heading_hierarchy"] == c["heading_hierarchy"] else None
            for c, b in zip(chunks, before, strict=True)]


class NotAnswerable(Exception):
    """The model's structured reply says the sources do not answer the question."""


def _llm(query: str, chunks: list[Chunk], ctx: Context, emit: Emit) -> tuple[str, list[Citation], int]:
    """Stream a grounded answer from the chat model, emitting each cleaned sentence as it completes."""
    load_client()  # before the budget is split: importing the SDK is not part of any attempt
    timeout = call_timeout(ctx, CHAT_RETRIES + 1, CHAT_BACKOFF)
    model = chat.get_chat_model(ctx.chat_model, temperature=ctx.temperature, max_tokens=ctx.max_tokens, timeout=timeout)
    # Quoted as data, with instruction-like sentences taken out: the model never reads an injected order.
    sources = format_sources([(i + 1, c["title"], neutralize(c["text"])) for i, c in enumerate(chunks)])
    prompt = [SystemMessage(ctx.system_prompt), HumanMessage(grounded_user_message(query, sources))]
    # The echo scan withholds a reply that repeats the system prompt, however it is spaced or encoded, before any
    # of it is shown; the sources say which of the prompt's own words an honest answer may use.
    echo = PromptEcho(ctx.system_prompt, CANARY, sources=" ".join(c["text"] for c in chunks))
    stream = AnswerStream(chunks, clean, emit, echo=echo)
    reader, tokens = VerdictReader(), 0
    try:
        # "nostream" keeps the raw tokens out of a `messages` stream: only cleaned sentences leave the node.
        # The structured reply says first whether the sources answer at all; a model that ignores the
        # schema and writes plain text is still read (NOT_FOUND then means "no").
        for piece in model.bind(response_format=ANSWER_SCHEMA).stream(prompt, config={"tags": ["nostream"]}):
            remaining(ctx)  # a server that drips tokens forever still ends with the turn
            tokens += piece.usage_metadata["total_tokens"] if piece.usage_metadata else 0
            stream.feed(reader.feed(piece.content if isinstance(piece.content, str) else ""))
    except AgentError:  # a leaked canary or the turn's deadline: already a typed failure
        raise
    except Exception as exc:  # the SDK has already retried what is retryable
        raise classify_failure(exc, ctx.chat_model, timeout, midway=bool(stream.raw)) from exc
    if reader.answerable is False:
        raise NotAnswerable(tokens)
    if not stream.raw.strip():
        raise LLMBadOutputError("the model returned an empty reply")
    answer, citations = stream.finish()
    return answer, citations, tokens


def canned(state: State) -> dict[str, Any]:
    """Reply to chit-chat or /reset: short, fixed, with no sources (classify already cleared a reset thread)."""
    intent = state.get("intent", "chitchat")
    messages = state.get("messages") or []
    reply = canned_reply(intent, str(messages[-1].content) if messages else "")
    return {"status": intent, "grounded": False, "answer": before(state) + reply + after(state),
            "messages": [AIMessage(reply)]}


Draft = tuple[str, list[Citation], list[Chunk], int, str]


def _draft(state: State, ctx: Context, retrieved: list[Chunk], streamed: StreamedAnswer,
           relay: MessageStream) -> Draft | dict[str, Any]:
    """Write the answer from the model (streamed) or by quoting; return the node's update when there is none."""
    query = state.get("retrieval_query", "")
    if not ctx.uses_model:
        # The gist of a selection is skimmed from every part retrieve chose, one per section.
        sources = retrieved if state.get("selection") and sums_up(query) else quoted_sources(retrieved)
        sources = read_on(ctx, sources)
        # A follow-up searched with the earlier question in brackets is quoted for what it asks: the bracket found
        # the sections, but scored with it the quote answered the earlier question again (docs/benchmarks.md).
        raw, tokens = _extractive(asked_question(state.get("messages", []), query), sources, ctx)
        answer, citations = cite(clean(raw, sources), sources)
        return answer, citations, sources, tokens, EXTRACTIVE
    try:
        # Each cleaned sentence goes to the `custom` stream (widget, CLI) and to the `messages` stream (Studio, SDK).
        def emit(event: dict[str, Any]) -> None:
            streamed(event)
            relay(event)
        answer, citations, tokens = _llm(query, retrieved, ctx, emit)
    except NotAnswerable as verdict:
        streamed.settle("")
        found: NotFound = {"reason": "not_answerable", "best_score": state.get("gate_score"),
                           "threshold": state.get("threshold"), "nearest": sections(retrieved)}
        return {"citations": [], "not_found": found, "model_used": ctx.chat_model,
                "tokens_used": int(verdict.args[0])}
    except AgentError as exc:
        log.warning("chat model failed: %s (%r)", exc.message, exc.__cause__)
        streamed.settle("")  # take back sentences streamed before the failure
        return {"error": {"code": exc.code, "message": exc.message, "node": "generate_grounded"}}
    return answer, citations, retrieved, tokens, ctx.chat_model


def _config() -> Any:
    """Return the node's run config, whose callbacks carry the `messages` stream; None outside a graph run."""
    try:
        return get_config()
    except RuntimeError:
        return None


def generate_grounded(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write the answer and its citations; an answer without a valid citation falls to not-found."""
    relay = MessageStream(_config())
    try:
        update = _generate(state, runtime, relay)
    except BaseException:
        relay.end(None)  # the stream's run is closed whatever happened
        raise
    # The stored message continues what was streamed: the rest (notes, the Sources list) streams now.
    relay.end((update.get("messages") or [None])[-1])
    return update


def _generate(state: State, runtime: Runtime[Context], relay: MessageStream) -> dict[str, Any]:
    """Write the turn's update; cleaned sentences go to `relay` as the model writes them."""
    if state.get("intent") in ("chitchat", "reset"):
        return canned(state)
    ctx = resolve_context(runtime.context)
    retrieved = state.get("retrieved", [])
    streamed = StreamedAnswer(runtime.stream_writer)
    if before(state):  # the expiry note comes first, so what streams stays a prefix of the answer
        streamed({"answer_delta": before(state)})
    draft = _draft(state, ctx, retrieved, streamed, relay)
    if isinstance(draft, dict):  # a failure, or the model's "the sources do not answer": no answer to check
        return draft
    answer, citations, sources, tokens, model_used = draft
    if not citations:
        streamed.settle("")  # the turn falls to not-found: take back what was streamed
        return {"citations": [], "model_used": model_used, "tokens_used": tokens}
    check = ground(answer, citations, sources, ctx)
    if ctx.grounding_mode == "strict" and check.unsupported:
        # Strict: what the sources do not say never reaches the reader; the stream is corrected below.
        answer, citations = cite(without_claims(answer, check.unsupported), sources)
    if check.support == 0 or not citations:  # nothing the sources say: not an answer (reason "unsupported")
        streamed.settle("")
        return {"citations": [], "grounding": check.report(), "model_used": model_used,
                "tokens_used": tokens + check.tokens}
    # Judged on the answer as written (what it states of the question), before the notes are added.
    query = state.get("retrieval_query", "")
    # About a selection, "summarize", "this page", "the code here" name the task: no answer states them.
    wanted = asked_terms(query) if state.get("selection") else None
    sure = answer_confidence(state.get("gate_score"), state.get("threshold"), query, answer, check.support, wanted)
    if not ctx.uses_model and _read_doubts(state):
        sure = min(sure, DOUBTED)
    source = "your selection" if state.get("selection") else "the documentation"
    if not ctx.uses_model and not state.get("selection") and sure < HEDGE_BELOW:
        # A quote is not presented as the answer when it may well miss what was asked (nothing of an extractive
        # answer has streamed yet, so a lead-in keeps the stream a prefix). A selection's answer is judged by
        # other evidence (how much of the question it covers), which this confidence does not measure.
        asked = asked_question(state.get("messages", []), state.get("retrieval_query", ""))
        answer = f"{hedge(asked)}\n\n{answer}"
    # A trailing note, so a streamed answer stays a prefix of the stored one.
    note = check.note() if ctx.grounding_mode == "flag" else ""
    answer += note + ("" if ctx.uses_model else EXTRACTIVE_NOTE.replace("the documentation", source))
    shown = before(state) + answer + after(state)
    # Keep this after every change to `answer` (e.g. a grounding note appended): it flushes what was not streamed.
    streamed.settle(shown)
    reason = flag_reason(sure, check.unsupported, removed=ctx.grounding_mode == "strict")
    if reason:
        log.info("answer flagged: %s (confidence %.3f, support %.3f)", reason, sure, check.support)
    # A chunk the answer read on into (`read_on`) joins the turn's retrieved sections, which every citation is one of.
    known = {c["chunk_id"] for c in retrieved}
    read = [c for c in sources if c["chunk_id"] not in known]
    return {
        **({"retrieved": [*retrieved, *read]} if read else {}),
        "status": "grounded",
        "answer": shown,
        "citations": citations,
        "model_used": model_used,
        "tokens_used": tokens + check.tokens,
        "grounding": check.report(),
        "confidence": sure,
        "flagged": bool(reason),
        "flag_reason": reason,
        "messages": [cited_message(answer, citations)],
    }


def ground(answer: str, citations: list[Citation], sources: list[Chunk], ctx: Context) -> Check:
    """Check each answer sentence against the full text of the chunks it cites."""
    full = {c["chunk_id"]: c["text"] for c in sources}  # citations keep only the first 500 characters
    chunks = [full[c["chunk_id"]] for c in citations]
    lexicon = load_lexicon(get_settings().data_dir, ctx.collection)
    try:
        timeout = call_timeout(ctx, CHAT_RETRIES + 1, CHAT_BACKOFF) if ctx.uses_model else None
    except TurnTimeoutError:  # the answer is already written: check it offline rather than lose it
        timeout = None
    if timeout is None:
        return check_lexical(answer, chunks, lexicon)
    judge = chat.get_chat_model(ctx.chat_model, temperature=0.0, max_tokens=300, timeout=timeout)
    return check_with_judge(answer, chunks, judge, lexicon)
