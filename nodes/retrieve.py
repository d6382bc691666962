"""retrieve: embed the standalone query, fetch dense (or hybrid) candidates and keep the best top-k after re-ranking."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph.budget import call_timeout, remaining
from graph.context import Context, resolve_context
from graph.state import State
from logic import answerability, lexical, ranking, retrieval_cache
from logic.errors import AgentError, EmbeddingError, IndexMismatchError, IndexMissingError, InvalidInputError
from logic.filters import Scope
from logic.heuristics import chitchat_reply, without_courtesies
from logic.hygiene import to_chunk
from logic.not_found import sections
from logic.page_hint import prefer_page
from logic.passages import closing_code, closing_lead_in, joined_code, opening_block
from logic.ranking import clears
from logic.selection import about_selection, selection_chunks, sums_up
from logic.spelling import corrected
from logic.types import Chunk, Reading
from logic.unicode_text import normalize_text
from logic.validation import clean_question
from tools import filters, lexicon_store, manifest, search
from tools.embedded_index import passage_vectors
from tools.embeddings import COHERE_RETRIES, LOCAL_MODEL, embed_query, get_embeddings, resolve_name
from tools.reader import read_best
from tools.settings import get_settings
from tools.words import english

# The conversation check compares cosines with constants fitted on the bundled embedder's scale; other
# embedders (a hash for tests, Cohere at another scale and behind a network call) skip it.
CONVERSATION_EMBEDDERS = frozenset({LOCAL_MODEL})


def _index(ctx: Context, name: str, selection: str) -> dict[str, Any] | None:
    """Return the collection's manifest entry; a selection is answered even without a usable index."""
    try:
        return manifest.collection_info(get_settings().data_dir, ctx.collection, name)
    except (IndexMissingError, IndexMismatchError):
        if selection:
            return None
        raise


def _embedded(name: str, embed: Any) -> Any:
    """Run an embedding call, turning any provider failure into EmbeddingError."""
    try:
        return embed()
    except Exception as exc:  # provider SDKs raise many types; all mean "embedding unavailable"
        raise EmbeddingError(f"the embedding model {name} failed ({type(exc).__name__})") from exc


def _lexicon(ctx: Context, texts: list[str] | None = None) -> lexical.Lexicon:
    """Return the index's term statistics (counted once for an old index), else the selection's own."""
    terms = lexicon_store.load(get_settings().data_dir, ctx.collection)
    if terms is None and texts is not None:
        return lexical.build(texts)
    if terms is None:  # an index built before term statistics existed: count them once now
        terms = lexical.build(search.iter_texts(get_settings().data_dir, ctx.collection))
        lexicon_store.save(get_settings().data_dir, ctx.collection, terms)
    return terms


def _previous_turns(messages: list[AnyMessage], ctx: Context) -> list[str]:
    """Return the last few earlier user questions of the thread, the conversation a follow-up belongs to."""
    found = []
    for message in reversed(messages[:-1]):
        if not isinstance(message, HumanMessage):
            continue
        try:
            text = clean_question(message.content, ctx.max_question_chars)
        except InvalidInputError:  # a refused message was no question
            continue
        if chitchat_reply(text) is None:  # "thanks!" says nothing about the topic
            found.append(without_courtesies(text))
        if len(found) == answerability.CONTEXT_TURNS:
            break
    return found[::-1]


@lru_cache(maxsize=256)  # a follow-up's earlier questions were embedded a turn ago: once per process
def _conversation_vector(name: str, text: str) -> tuple[float, ...]:
    """Embed a question or a section with the bundled embedder for the conversation check."""
    return tuple(_embedded(name, lambda: get_embeddings(name).embed_query(text)))


# How far a section is from the conversation, given the section's stored vector when the search returned it.
OffTopic = Callable[[Chunk, Sequence[float] | None], float]


def _off_topic(name: str, vector: Sequence[float], previous: list[str]) -> OffTopic | None:
    """Return the measure of how far a section is from the conversation; None on a first turn."""
    if not previous or name not in CONVERSATION_EMBEDDERS:
        return None

    def measure(chunk: Chunk, stored: Sequence[float] | None) -> float:
        turns = [_conversation_vector(name, text) for text in previous]
        if not answerability.continues(vector, turns):  # a new subject owes nothing to the earlier turns
            return 0.0
        # The embedded index returns the section's vector as ingested; embedding it again took ~70 ms a turn.
        section = stored if stored is not None else _conversation_vector(name, answerability.section_text(chunk))
        return answerability.off_topic(vector, turns, section)

    return measure


def _reader(ctx: Context, name: str, embeddings: Embeddings, query: str, threshold: float,
            readings: list[Reading]) -> Callable[[list[Chunk], dict[str, float]], float | None] | None:
    """Return what reads the best sections for the gate (collecting the readings), or None without the reader.

    The reading model's gate weights were fitted next to the bundled embedder's cosines, and it finds the
    passages to read by the vectors ingest stored for the answerer: other embedders go without it.
    """
    settings = get_settings()
    if not settings.reader or name not in CONVERSATION_EMBEDDERS:
        return None
    store = None if settings.qdrant_url else passage_vectors(settings.data_dir, ctx.collection, name)

    def read(best: list[Chunk], evidence: dict[str, float]) -> float | None:
        if not answerability.worth_reading(evidence, threshold):
            return None  # decided whatever the passages say: ~30 ms a turn saved
        remaining(ctx)
        readings[:] = _embedded(name, lambda: read_best(query, best, embeddings, store))
        return readings[0]["answers"] if readings else None

    return read


def _search(ctx: Context, embeddings: Embeddings, vector: list[float], query: str, mode: str,
            scope: Scope | None, off_topic: OffTopic | None = None, threshold: float = 0.0,
            readings: list[Reading] | None = None) -> tuple[list[Chunk], float | None]:
    """Search the collection (within `scope`, when given) and re-rank the candidates; `readings` collects reads."""
    remaining(ctx)  # out of time: no further call
    hits = search.find(get_settings().data_dir, ctx.collection, embeddings, vector, ranking.candidates_for(ctx.top_k),
                       mode=mode, text=query, scope=scope)
    stored = {str(doc.metadata.get("chunk_id", "")): doc.metadata.get(search.VECTOR_KEY) for doc, _ in hits}
    name = resolve_name(ctx.embedding_model)
    return ranking.rank(query, [to_chunk(doc.metadata, score) for doc, score in hits], _lexicon(ctx), ctx.top_k,
                        (lambda chunk: off_topic(chunk, stored.get(chunk["chunk_id"]))) if off_topic else None,
                        sizes=ranking.page_sizes(doc.metadata for doc, _ in hits),
                        read=_reader(ctx, name, embeddings, query, threshold, readings) if readings is not None
                        else None, ordinary=english())


def _rejoined(ctx: Context, chunks: list[Chunk]) -> list[Chunk]:
    """Join what chunking parted: a lead-in and its block, and the pieces of one long code block.

    A chunk ending on a lead-in ("…is configured using X and Y:") is given the list, table or code block that opens
    the page's next chunk; a chunk opening with a block is given the lead-in that ends the previous one. Apart, the
    lead-in answers nothing and the answerer passes over it, and the block is quoted without what it shows. A code
    block cut between chunks (a call left open, a piece opening with `  })`) is given its other piece from the
    same section, so the quote is code that reads whole.
    """
    # Each chunk's two ends, parsed once: (its lead-in ending it, the block it opens with, the code it ends on).
    ends = [(closing_lead_in(c["text"]), opening_block(c["text"]), closing_code(c["text"])) if "chunk_index" in c
            else ("", "", "") for c in chunks]
    wanted = {(c["source"], c["chunk_index"] + step) for c, (lead, block, code) in zip(chunks, ends, strict=True)
              for step, cut in ((1, bool(lead or code)), (-1, bool(block) and c["chunk_index"] > 0)) if cut}
    if not wanted:
        return chunks
    found = search.chunks_at(get_settings().data_dir, ctx.collection, sorted(wanted))
    places = {(c["source"], c.get("chunk_index")) for c in chunks}
    joined = []
    for chunk, (ends_on_lead, opens_with, _) in zip(chunks, ends, strict=True):
        text = chunk["text"]
        # Both pieces retrieved: each gets the same whole block, quoted once. Else this piece is what was found.
        alone = (chunk["source"], chunk.get("chunk_index", -2) - 1) not in places
        if opens_with and (code := joined_code(closing_code(_near(found, chunk, -1, True)), opens_with, alone)):
            text = code + text.strip("\n")[len(opens_with):]
        elif opens_with and (lead := closing_lead_in(_near(found, chunk, -1))):
            text = f"{lead}\n\n{text.lstrip()}"
        block = opening_block(_near(found, chunk, 1)) if ends_on_lead else ""
        last = closing_code(text)
        if last and (code := joined_code(last, opening_block(_near(found, chunk, 1, True)))):
            text = text.rstrip("\n")[:-len(last)] + code
        whole = chunk.copy()
        whole["text"] = f"{text.rstrip()}\n\n{block}" if block else text
        joined.append(whole)
    return joined


def _near(found: dict[tuple[str, int], dict[str, Any]], chunk: Chunk, step: int, same_section: bool = False) -> str:
    """Return the text of the chunk `step` places from `chunk` on its page ('' if not fetched or in another section)."""
    other = found.get((chunk["source"], chunk.get("chunk_index", -2) + step)) or {}
    if same_section and list(other.get("heading_hierarchy") or []) != chunk["heading_hierarchy"]:
        return ""
    return normalize_text(str(other.get("text", "")))


def _fresh(ctx: Context, name: str, query: str, selection: str, scope: Scope | None,
           threshold: float, mode: str, previous: list[str]) -> dict[str, Any]:
    """Embed and search: the selection in context mode, else the (filtered) index."""
    embeddings = get_embeddings(name)
    timeout = call_timeout(ctx, COHERE_RETRIES + 1)  # out of time: no further network call
    vector = _embedded(name, lambda: embed_query(embeddings, query, timeout))
    if selection:
        hits = _embedded(name, lambda: selection_chunks(selection, embeddings, vector, scored=not sums_up(query)))
        lexicon = lexical.build(" ".join([*c["heading_hierarchy"], c["text"]]) for c in hits)
        return about_selection(query, hits, lexicon, ctx.top_k)
    off_topic = _off_topic(name, vector, previous)
    readings: list[Reading] = []
    chunks, confidence = _search(ctx, embeddings, vector, query, mode, scope, off_topic, threshold, readings)
    if clears(confidence, threshold):  # only an answer quotes them
        chunks = _rejoined(ctx, chunks)
    result: dict[str, Any] = {"retrieved": chunks, "top_score": ranking.top_cosine(chunks), "gate_score": confidence,
                              "readings": readings}
    if scope is not None and not clears(confidence, threshold):
        # Same query vector without the filter: was the filter what kept the answer out?
        wider, best = _search(ctx, embeddings, vector, query, mode, None, off_topic)
        if clears(best, threshold):
            result["not_found"] = {"reason": "filtered_out", "best_score": confidence, "threshold": threshold,
                                   "nearest": sections(wider)}
    return result


def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Search the collection or the user's selection; failures are recorded for error_handler, not raised."""
    ctx = resolve_context(runtime.context)
    name = resolve_name(ctx.embedding_model)
    query, selection = state["retrieval_query"], state.get("selection") or ""
    wanted = state.get("applied_filters") or {}
    try:
        info = _index(ctx, name, selection)
        if not selection:  # "how do i pubish my crate": searched, gated and answered as "publish", the docs' word
            query = corrected(query, _lexicon(ctx).df, english())
        threshold, _ = manifest.resolve_threshold(ctx.score_threshold, info, name)
        # Filters are checked against the index's own values before anything is embedded.
        scope = filters.scope(wanted, info or {})
        thread = get_config().get("configurable", {}).get("thread_id")
        data_dir = get_settings().data_dir
        previous = _previous_turns(state.get("messages", []), ctx)
        key = retrieval_cache.key(str(thread), manifest.version(info or {}), name, data_dir, ctx.collection,
                                  query, wanted, ctx.top_k, threshold, retrieval_cache.text_hash(selection))
        result = retrieval_cache.get(key) if thread else None
        cached = result is not None
        if result is None:
            result = _fresh(ctx, name, query, selection, scope, threshold, manifest.retrieval_mode(info or {}),
                            previous)
            if thread:
                retrieval_cache.put(key, result)
        elif result.get("retrieved") and not selection and name in CONVERSATION_EMBEDDERS:
            # The search is reused, the conversation check is not: the earlier turns have changed since.
            off_topic = _off_topic(name, _conversation_vector(name, query), previous)
            readings = result.get("readings") or []
            result["gate_score"] = answerability.gate_score(answerability.features(
                query, result["retrieved"], _lexicon(ctx), (lambda c: off_topic(c, None)) if off_topic else None,
                readings[0]["answers"] if readings else None, ordinary=english()))
    except AgentError as exc:
        return {"embedding_model": name, "error": {"code": exc.code, "message": exc.message, "node": "retrieve"}}
    if state.get("page_hint") and not selection:  # after the cache: the hint is per turn, the search is not
        result = {**result, "retrieved": prefer_page(result["retrieved"], state.get("page_hint", ""))}
    # A question about the selection itself brings its own threshold (share of asked-for terms present).
    return {"threshold": threshold, **result, "embedding_model": name, "retrieval_cached": cached,
            "retrieval_query": query}
