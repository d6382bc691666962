"""Side by side: the agent vs LlamaIndex's CondensePlusContextChatEngine on one corpus, embedder and Qdrant store.

Run with the bench extra installed (`make bench-install`):

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/llamaindex_side_by_side.py [--json]

Both systems get the same chunks (the project's chunker), the same embedder object (the bundled
all-MiniLM-L6-v2 through LangChain) and the same local Qdrant client (two collections, one path).
LlamaIndex needs an LLM; a deterministic offline stand-in is used, so its condense step passes the
follow-up through unchanged, and its "abstention" is a SimilarityPostprocessor at the project's
calibrated threshold leaving no nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# Set before any Hugging Face import: the model is bundled and nothing may touch the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

try:
    from llama_index.core import Settings, StorageContext, VectorStoreIndex
    from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
    from llama_index.core.chat_engine import CondensePlusContextChatEngine
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.postprocessor import SimilarityPostprocessor
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.embeddings.langchain import LangchainEmbedding
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from pydantic import PrivateAttr
except ImportError as exc:  # the bench extra is optional; say how to get it instead of a bare traceback
    raise SystemExit(f"llama-index is not installed ({exc.name}); run `make bench-install` first") from exc

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "eval"
LOCAL_MODEL = "local/all-MiniLM-L6-v2"
# ingest_folder's default; passed explicitly to both sides so the chunks are the same by construction.
CHUNK_TOKENS = 200
TOP_K = 5
PROJECT_COLLECTION = "bench-project"
LLAMA_COLLECTION = "bench-llamaindex"
CONDENSE_INPUT, CONDENSE_END = "Follow Up Input:", "Standalone question:"
FAKE_ANSWER = "(offline stand-in LLM: no answer generated)"
# Warm-up turns are not from the measured sets and are never recorded.
WARMUP_QUESTIONS = ["What is ROS 2?", "How do I bake a chocolate cake?", "What sensors does Gazebo simulate?"]
WARMUP_CONVERSATION = ["What is Gazebo?", "How do I install it?"]
VERSIONED = ["llama-index-core", "llama-index-vector-stores-qdrant", "llama-index-embeddings-langchain",
             "langgraph", "langchain-core", "langchain-qdrant", "qdrant-client", "onnxruntime"]


# ---------------------------------------------------------------- pure helpers (unit-tested)


# Best balanced accuracy for a plain cosine cut on the textbook + SQuAD out-of-scope sets (docs/benchmarks.md).
COSINE_CUTOFF = 0.39

def fake_completion(prompt: str) -> str:
    """Answer a prompt offline: a condense prompt gets its follow-up back unchanged, anything else a fixed line."""
    head, found, tail = prompt.rpartition(CONDENSE_INPUT)
    if not found:
        return FAKE_ANSWER
    return tail.split(CONDENSE_END, 1)[0].strip()


def make_record(item_id: str, turn: int, question: dict[str, Any], result: dict[str, Any],
                latency_ms: float) -> dict[str, Any]:
    """Shape one turn like rag_agent.evaluate's records, so evaluate.metrics scores both systems alike."""
    retrieved = result.get("retrieved") or []
    return {
        "id": item_id, "turn": turn, "question": question["question"],
        "expected": question.get("expected") or ("GROUNDED" if question.get("gold") else "NOT_FOUND"),
        "gold": question.get("gold") or [],
        "status": result["status"], "retrieval_query": result.get("retrieval_query", ""),
        "retrieved": [{"source": r["source"], "score": r["score"]} for r in retrieved],
        # Neither side's citations are compared: LlamaIndex's stand-in LLM writes no answer to cite from.
        "citations": [],
        "retrieved_ids": [r["chunk_id"] for r in retrieved],
        "top_score": retrieved[0]["score"] if retrieved else None,
        "latency_ms": round(latency_ms, 2),
    }


def p50_p95(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Return the median and the 95th percentile with the same rank rule as rag_agent.evaluate.metrics."""
    ordered = sorted(values)
    if not ordered:
        return None, None
    return round(statistics.median(ordered), 2), round(ordered[int(0.95 * (len(ordered) - 1))], 2)


def latency(values: Sequence[float], floor: Sequence[float] | None) -> dict[str, Any]:
    """Return p50, p95 and the median per-turn time above the bare embed+search floor (work every system shares)."""
    p50, p95 = p50_p95(values)
    # Paired: each turn minus the floor call made right beside it, so load swings on a shared machine cancel.
    overhead = round(statistics.median(x - y for x, y in zip(values, floor, strict=True)), 2) if floor else None
    return {"p50_ms": p50, "p95_ms": p95, "overhead_p50_ms": overhead, "turns": len(values)}


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Return the median of per-turn ratios a/b for turns measured side by side."""
    ratios = [x / y for x, y in zip(a, b, strict=True) if y > 0]
    return round(statistics.median(ratios), 3) if ratios else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """Return numerator / denominator rounded, or None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def same_top_k(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[int, int]:
    """Count first turns where both systems retrieved the same chunk ids in the same order, and how many there were."""
    firsts = [(x, y) for x, y in zip(a, b, strict=True) if x["turn"] == 1]
    return sum(x["retrieved_ids"] == y["retrieved_ids"] for x, y in firsts), len(firsts)


def max_abs_diff(a: dict[str, list[float]], b: dict[str, list[float]]) -> float:
    """Return the largest element-wise difference between vectors stored under the same ids."""
    if a.keys() != b.keys():
        raise ValueError("the two collections hold different point ids")
    return max((abs(x - y) for key in a for x, y in zip(a[key], b[key], strict=True)), default=0.0)


def rotate(items: Sequence[Any], shift: int) -> list[Any]:
    """Rotate a list left by shift, so each system takes its turn at going first."""
    if not items:
        return []
    shift %= len(items)
    return [*items[shift:], *items[:shift]]


def _fmt(value: Any) -> str:
    """Format a figure for the Markdown table."""
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown_table(result: dict[str, Any]) -> str:
    """Render the measured figures as the Markdown table used in docs/benchmarks-llamaindex.md."""
    p, li = result["project"], result["llamaindex"]
    rows = [
        ("textbook hit@5 (in-scope, all turns)", "textbook", "hit_at_5"),
        ("textbook MRR@10", "textbook", "mrr_at_10"),
        ("textbook follow-up hit@5", "textbook", "followup_hit_at_5"),
        ("textbook abstention recall", "textbook", "abstention_recall"),
        ("textbook false abstention", "textbook", "false_abstention_rate"),
        ("SQuAD OOD abstention recall", "ood", "abstention_recall"),
        ("latency p50 ms (all turns)", "latency", "p50_ms"),
        ("latency p95 ms (all turns)", "latency", "p95_ms"),
        ("time above bare embed+search, median per turn ms", "latency", "overhead_p50_ms"),
    ]
    lines = ["| figure | project (LangGraph) | LlamaIndex C+C | project / LlamaIndex |", "| --- | ---: | ---: | ---: |"]
    for label, group, key in rows:
        a, b = p[group][key], li[group][key]
        shown = ratio(a, b) if group == "latency" else None
        lines.append(f"| {label} | {_fmt(a)} | {_fmt(b)} | {_fmt(shown)} |")
    r = result["ratios_project_over_llamaindex"]
    lines.append(f"| median of per-turn latency ratios (paired) | | | {_fmt(r['latency_paired_median'])} |")
    lines.append(f"| new chat session setup p50 ms (not in the turn figures) | {_fmt(p['session_setup_p50_ms'])} | "
                 f"{_fmt(li['session_setup_p50_ms'])} | |")
    floor = result["floor"]
    lines.append(f"| bare embed+search p50 / p95 ms (embed p50, search p50) | {_fmt(floor['p50_ms'])} / "
                 f"{_fmt(floor['p95_ms'])} ({_fmt(floor['embed_p50_ms'])}, {_fmt(floor['search_p50_ms'])}) | "
                 "(shared) | |")
    return "\n".join(lines)


# ---------------------------------------------------------------- LlamaIndex pieces


class OfflineLLM(CustomLLM):
    """Deterministic stand-in LLM: no network, the follow-up as the condensed question, a fixed line as the answer."""

    @property
    def metadata(self) -> LLMMetadata:
        """Describe a small completion model so the engine's prompt budgeting has numbers to use."""
        return LLMMetadata(context_window=4096, num_output=256, model_name="offline-stand-in")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Return the stand-in completion."""
        return CompletionResponse(text=fake_completion(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        """Stream the stand-in completion as one piece."""
        text = fake_completion(prompt)
        yield CompletionResponse(text=text, delta=text)


class RecordNodes(BaseNodePostprocessor):
    """Pass-through postprocessor that keeps the retriever's raw top-k and the condensed query it answered."""

    _query: str = PrivateAttr(default="")
    _nodes: list[NodeWithScore] = PrivateAttr(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        """Name the component for LlamaIndex's registry."""
        return "RecordNodes"

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        """Remember the nodes before the similarity cutoff sees them."""
        self._query = query_bundle.query_str if query_bundle else ""
        self._nodes = list(nodes)
        return nodes

    def last(self) -> tuple[str, list[NodeWithScore]]:
        """Return the last condensed query and its raw nodes."""
        return self._query, self._nodes


# ---------------------------------------------------------------- the three timed systems


@dataclass
class System:
    """A named way to answer a turn: a session factory and an ask function returning a result dict."""

    name: str
    new_session: Callable[[], Any]
    ask: Callable[[Any, str], dict[str, Any]]
    records: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, list[float]] = field(default_factory=dict)


def project_system(agent: Any) -> System:
    """Wrap the agent: a session is a fresh thread id."""

    def ask(thread: str, question: str) -> dict[str, Any]:
        return dict(agent.ask(question, thread))

    return System("project", lambda: uuid.uuid4().hex, ask)


def llamaindex_system(index: VectorStoreIndex, llm: OfflineLLM, threshold: float) -> System:
    """Wrap CondensePlusContextChatEngine: a session is a new engine with its own default memory."""

    def new_session() -> tuple[CondensePlusContextChatEngine, RecordNodes]:
        recorder = RecordNodes()
        engine = CondensePlusContextChatEngine.from_defaults(
            retriever=index.as_retriever(similarity_top_k=TOP_K), llm=llm,
            node_postprocessors=[recorder, SimilarityPostprocessor(similarity_cutoff=threshold)],
        )
        return engine, recorder

    def ask(session: tuple[CondensePlusContextChatEngine, RecordNodes], question: str) -> dict[str, Any]:
        engine, recorder = session
        response = engine.chat(question)
        query, nodes = recorder.last()
        return {
            # No gate in LlamaIndex: "no node cleared the cutoff" is counted as abstaining.
            "status": "grounded" if response.source_nodes else "not_found",
            "retrieval_query": query,
            "retrieved": [{"chunk_id": n.node.node_id, "source": n.node.metadata.get("source", ""),
                           "score": round(n.score or 0.0, 3)} for n in nodes],
        }

    return System("llamaindex", new_session, ask)


def floor_system(client: Any, embeddings: Any, collection: str, threshold: float) -> System:
    """Embed the raw question and search once: the work both frameworks share, timed as a reference."""

    timings: dict[str, list[float]] = {"embed_ms": [], "search_ms": []}

    def ask(_: None, question: str) -> dict[str, Any]:
        start = time.perf_counter()
        vector = embeddings.embed_query(question)
        middle = time.perf_counter()
        points = client.query_points(collection, query=vector, limit=TOP_K, with_payload=True).points
        timings["embed_ms"].append((middle - start) * 1000)
        timings["search_ms"].append((time.perf_counter() - middle) * 1000)
        retrieved = [{"chunk_id": str(p.id), "source": (p.payload or {}).get("metadata", {}).get("source", ""),
                      "score": round(p.score, 3)} for p in points]
        top = retrieved[0]["score"] if retrieved else 0.0
        return {"status": "grounded" if top >= threshold else "not_found", "retrieval_query": question,
                "retrieved": retrieved}

    return System("floor", lambda: None, ask, timings=timings)


def drive(systems: list[System], questions: list[dict[str, Any]], conversations: list[dict[str, Any]],
          record: bool = True) -> None:
    """Ask every item on every system, interleaved turn by turn with a rotating order, timing each call."""
    items = [(q.get("id") or q.get("source_id", ""), [q]) for q in questions]
    items += [(c["id"], c["turns"]) for c in conversations]
    for position, (item_id, turns) in enumerate(items):
        order = rotate(systems, position)
        sessions = {}
        for system in order:
            # Timed apart from the turns: a LlamaIndex session is a new engine and memory, the agent's a thread id.
            start = time.perf_counter()
            sessions[system.name] = system.new_session()
            if record:
                system.timings.setdefault("session_ms", []).append((time.perf_counter() - start) * 1000)
        for turn, question in enumerate(turns, 1):
            for system in order:
                start = time.perf_counter()
                result = system.ask(sessions[system.name], question["question"])
                elapsed_ms = (time.perf_counter() - start) * 1000
                if record:
                    system.records.append(make_record(item_id, turn, question, result, elapsed_ms))


def embedder_calls(systems: list[System], embeddings: Any, question: str) -> dict[str, dict[str, int]]:
    """Count the embedder calls one untimed turn of each system makes, to explain the overhead figures."""
    from unittest import mock

    cls = type(embeddings)
    counts = {"embed_query": 0, "embed_documents_texts": 0}
    original_query, original_documents = cls.embed_query, cls.embed_documents

    def query(self: Any, text: str) -> list[float]:
        counts["embed_query"] += 1
        return list(original_query(self, text))

    def documents(self: Any, texts: list[str]) -> list[list[float]]:
        counts["embed_documents_texts"] += len(texts)
        return list(original_documents(self, texts))

    out: dict[str, dict[str, int]] = {}
    with mock.patch.object(cls, "embed_query", query), mock.patch.object(cls, "embed_documents", documents):
        for system in systems:
            counts.update(embed_query=0, embed_documents_texts=0)
            system.ask(system.new_session(), question)
            out[system.name] = dict(counts)
    return out


# ---------------------------------------------------------------- set-up and report


def machine() -> dict[str, Any]:
    """Describe where the figures were measured."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("model name")), "")
    return {"platform": platform.platform(), "python": platform.python_version(), "cpu_count": os.cpu_count(),
            "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "cpu_model": model,
            "loadavg_1m_start": round(os.getloadavg()[0], 2)}


def versions() -> dict[str, str]:
    """Return the installed versions of the packages the comparison depends on."""
    return {name: metadata.version(name) for name in VERSIONED}


def stored_vectors(client: Any, collection: str, ids: list[str]) -> dict[str, list[float]]:
    """Read the stored vectors of the given points (unnamed or LlamaIndex's named dense vector)."""
    out: dict[str, list[float]] = {}
    for point in client.retrieve(collection, ids=ids, with_vectors=True):
        vector = point.vector
        out[str(point.id)] = list(next(iter(vector.values())) if isinstance(vector, dict) else vector)
    return out


def build(corpus: Path, data_dir: Path, reembed: bool) -> dict[str, Any]:
    """Ingest the corpus with the project's pipeline, then index the same chunks through LlamaIndex."""
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.context import Context
    from logic.chunking import chunk_markdown
    from rag_agent.service import Agent
    from tools import manifest, vectorstore
    from tools.embeddings import get_embeddings
    from tools.ingest import ingest_folder, iter_documents, page_url, to_document

    embeddings = get_embeddings(LOCAL_MODEL)
    embeddings.embed_query("load the model before any timer starts")

    start = time.perf_counter()
    ingest_folder(corpus, data_dir=data_dir, collection=PROJECT_COLLECTION, embeddings=embeddings,
                  embedding_model=LOCAL_MODEL, recreate=True, chunk_tokens=CHUNK_TOKENS, progress=False)
    project_build = time.perf_counter() - start
    # LlamaIndex can only cut on cosine, so it gets the cut calibrated for plain cosine on these same
    # sets (0.39, the project's own gate before it moved to a confidence score); the project keeps its own.
    threshold = COSINE_CUTOFF
    project_threshold = manifest.threshold(manifest.collection_info(data_dir, PROJECT_COLLECTION, LOCAL_MODEL))
    client = vectorstore.open_client(data_dir)  # the same object ingest_folder used: one client per local path
    agent = Agent(Context(embedding_model=LOCAL_MODEL, data_dir=str(data_dir), collection=PROJECT_COLLECTION,
                          top_k=TOP_K), InMemorySaver())

    start = time.perf_counter()
    nodes: list[TextNode] = []
    for source, text in iter_documents(corpus):
        for chunk in chunk_markdown(text, source, CHUNK_TOKENS):
            point_id, doc = to_document(chunk, page_url(source, text, ""))
            meta = {k: v for k, v in doc.metadata.items() if k != "text"}  # the body is the node's text already
            # Exclude every metadata key so LlamaIndex embeds exactly the project's text (heading path + body).
            nodes.append(TextNode(id_=point_id, text=doc.page_content, metadata=meta,
                                  excluded_embed_metadata_keys=list(meta), excluded_llm_metadata_keys=list(meta)))
    ids = [n.node_id for n in nodes]
    project_vectors = stored_vectors(client, PROJECT_COLLECTION, ids)
    if not reembed:
        # A --reembed run showed LlamaIndex's own embedding of these nodes stores bit-identical vectors,
        # so by default they are copied and the second full embedding pass (minutes on 2 cores) is skipped.
        for node in nodes:
            node.embedding = project_vectors[node.node_id]
    llm = OfflineLLM()
    # The same LangChain embedder object the agent uses, in batches of 64 like ingest_folder.
    embed_model = LangchainEmbedding(embeddings, model_name=LOCAL_MODEL, embed_batch_size=64)
    # Globals too, so no LlamaIndex component falls back to its OpenAI defaults.
    Settings.llm, Settings.embed_model = llm, embed_model
    if client.collection_exists(LLAMA_COLLECTION):
        client.delete_collection(LLAMA_COLLECTION)
    with warnings.catch_warnings():
        # LlamaIndex indexes doc_id by default; local Qdrant warns that payload indexes are a no-op there.
        warnings.filterwarnings("ignore", message=".*[Pp]ayload ind.*")
        store = QdrantVectorStore(collection_name=LLAMA_COLLECTION, client=client)
        index = VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store),
                                 embed_model=embed_model, insert_batch_size=len(nodes))
    llama_build = time.perf_counter() - start

    llama_vectors = stored_vectors(client, LLAMA_COLLECTION, ids)
    return {
        "agent": agent, "index": index, "llm": llm, "client": client, "embeddings": embeddings,
        "threshold": threshold, "project_threshold": project_threshold,
        "checks": {
            "chunks_project": int(client.count(PROJECT_COLLECTION).count),
            "chunks_llamaindex": int(client.count(LLAMA_COLLECTION).count),
            "same_chunk_ids": set(project_vectors) == set(ids) == set(llama_vectors),
            "llamaindex_vectors": "embedded by LlamaIndex" if reembed else "copied from the project's collection",
            "max_abs_vector_diff": max_abs_diff(project_vectors, llama_vectors),
        },
        "build_seconds": {"project_ingest": round(project_build, 1),
                          "llamaindex_chunk_and_index": round(llama_build, 1)},
    }


def summarise(system: System, textbook_turns: int, floor: Sequence[float]) -> dict[str, Any]:
    """Score one system's records: textbook figures, OOD abstention, latency over every turn."""
    from rag_agent import evaluate

    textbook, ood = system.records[:textbook_turns], system.records[textbook_turns:]
    keep = ("hit_at_1", "hit_at_5", "mrr_at_10", "followup_hit_at_5", "abstention_recall", "false_abstention_rate",
            "count_in_scope", "count_out_of_scope", "count_followups", "errors")
    tb, od = evaluate.metrics(textbook), evaluate.metrics(ood)
    return {"textbook": {k: tb[k] for k in keep},
            "ood": {k: od[k] for k in ("abstention_recall", "count_out_of_scope", "errors")},
            "latency": latency([r["latency_ms"] for r in system.records], floor),
            "session_setup_p50_ms": p50_p95(system.timings.get("session_ms", []))[0]}


def followups(project: System, llama: System) -> list[dict[str, Any]]:
    """List each later conversation turn with the query each system retrieved with and whether it hit."""

    def hit(r: dict[str, Any]) -> bool:
        return any(x["source"] in r["gold"] for x in r["retrieved"][:TOP_K])

    return [{"id": a["id"], "turn": a["turn"], "question": a["question"], "expected": a["expected"],
             "project_query": a["retrieval_query"], "project_hit": hit(a), "project_status": a["status"],
             "llamaindex_query": b["retrieval_query"], "llamaindex_hit": hit(b), "llamaindex_status": b["status"]}
            for a, b in zip(project.records, llama.records, strict=True) if a["turn"] > 1]


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build both sides in this process, warm them up, measure every set, and return one result object."""
    from rag_agent.evaluate import load_jsonl

    began = time.perf_counter()
    info = machine()
    built = build(args.corpus, args.data_dir, args.reembed)
    project = project_system(built["agent"])
    llama = llamaindex_system(built["index"], built["llm"], built["threshold"])
    floor = floor_system(built["client"], built["embeddings"], PROJECT_COLLECTION, built["threshold"])
    systems = [project, llama, floor]

    drive(systems, [{"question": q} for q in WARMUP_QUESTIONS],
          [{"id": "warm", "turns": [{"question": q} for q in WARMUP_CONVERSATION]}], record=False)
    questions, conversations = load_jsonl(args.questions), load_jsonl(args.conversations)
    ood = load_jsonl(args.ood)
    drive(systems, questions, conversations)
    textbook_turns = len(project.records)
    drive(systems, ood, [])

    floor_ms = [r["latency_ms"] for r in floor.records]
    result: dict[str, Any] = {
        "command": " ".join(["benchmarks/llamaindex_side_by_side.py", *sys.argv[1:]]),
        "machine": info | {"loadavg_1m_end": round(os.getloadavg()[0], 2)},
        "versions": versions(),
        "settings": {"embedder": LOCAL_MODEL, "top_k": TOP_K, "chunk_tokens": CHUNK_TOKENS,
                     "threshold": built["threshold"], "project_threshold": built["project_threshold"],
                     "corpus": str(args.corpus),
                     "llamaindex_llm": "OfflineLLM stand-in (condense = follow-up unchanged)",
                     "llamaindex_abstention": f"SimilarityPostprocessor(similarity_cutoff={built['threshold']}) "
                                              "left no nodes"},
        "checks": built["checks"] | dict(zip(("same_top5_first_turns", "first_turns"),
                                             same_top_k(project.records, llama.records), strict=True)),
        "build_seconds": built["build_seconds"],
        "project": summarise(project, textbook_turns, floor_ms),
        "llamaindex": summarise(llama, textbook_turns, floor_ms),
        "floor": latency(floor_ms, None) | {"embed_p50_ms": p50_p95(floor.timings["embed_ms"])[0],
                                            "search_p50_ms": p50_p95(floor.timings["search_ms"])[0]},
        "embedder_calls_per_turn": embedder_calls(systems, built["embeddings"], questions[0]["question"]),
    }
    p, li = result["project"]["latency"], result["llamaindex"]["latency"]
    result["ratios_project_over_llamaindex"] = {
        "latency_p50": ratio(p["p50_ms"], li["p50_ms"]), "latency_p95": ratio(p["p95_ms"], li["p95_ms"]),
        "latency_paired_median": paired_ratio([r["latency_ms"] for r in project.records],
                                              [r["latency_ms"] for r in llama.records]),
        "overhead_p50": ratio(p["overhead_p50_ms"], li["overhead_p50_ms"]),
    }
    result["followups"] = followups(project, llama)
    result["total_seconds"] = round(time.perf_counter() - began, 1)
    return result


def report(result: dict[str, Any]) -> str:
    """Render a result object for a person: machine, checks, the table, ratios and the follow-up turns."""
    m = result["machine"]
    out = [f"machine: {m['platform']}, {m['cpu_count']} CPUs ({m['cpu_model']}), python {m['python']}, "
           f"load {m['loadavg_1m_start']} → {m['loadavg_1m_end']}",
           f"threshold {result['settings']['threshold']}, top_k {TOP_K}, checks {result['checks']}",
           f"build seconds {result['build_seconds']}, total {result['total_seconds']} s", "",
           markdown_table(result), "",
           f"ratios project / llamaindex: {result['ratios_project_over_llamaindex']}",
           f"embedder calls in one turn: {result['embedder_calls_per_turn']}", ""]
    for f in result["followups"]:
        out.append(f"{f['id']}#{f['turn']} {f['question']!r}")
        for name in ("project", "llamaindex"):
            out.append(f"  {name:10} {f[name + '_status']:9} hit={f[name + '_hit']!s:5} {f[name + '_query']!r}")
    return "\n".join(out)


def _parser() -> argparse.ArgumentParser:
    """Describe the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=SHARED / "textbook" / "corpus")
    parser.add_argument("--questions", type=Path, default=SHARED / "textbook" / "textbook-questions.jsonl")
    parser.add_argument("--conversations", type=Path, default=SHARED / "textbook" / "textbook-conversations.jsonl")
    parser.add_argument("--ood", type=Path, default=SHARED / "ood" / "squad2-ood-questions.jsonl")
    parser.add_argument("--data-dir", type=Path, help="keep the index here (default: a temporary folder, removed)")
    parser.add_argument("--reembed", action="store_true",
                        help="let LlamaIndex embed the chunks itself instead of copying the project's vectors")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table or one JSON object."""
    args = _parser().parse_args(argv)
    # The project must take its offline path (local embedder, extractive answer, local Qdrant), like LlamaIndex.
    for name in ("OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_URL", "RAG_AGENT_EMBEDDING_MODEL"):
        os.environ.pop(name, None)
    temporary = args.data_dir is None
    args.data_dir = Path(tempfile.mkdtemp(prefix="bench-llamaindex-")) if temporary else args.data_dir
    try:
        result = run(args)
    finally:
        from tools import vectorstore

        vectorstore.close_clients()
        if temporary:
            shutil.rmtree(args.data_dir, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
        return 0
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
