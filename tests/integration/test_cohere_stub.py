"""The Cohere embedding path with the real langchain-cohere client against a stub server on 127.0.0.1."""

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import tools.embeddings
from graph.context import Context
from rag_agent.service import Agent
from tests.integration.stub_server import JSONStub, Raw, serve
from tools import vectorstore
from tools.embeddings import get_embeddings
from tools.ingest import ingest_folder

MODEL = "cohere/embed-english-v3.0"
PAGES = {"isaac.md": "# Isaac Sim\n\nIsaac Sim is a robotics simulator built on Omniverse.\n",
         "bread.md": "# Bread\n\nKnead the bread dough with flour, water and yeast.\n"}


def vector(text: str) -> list[float]:
    """A deterministic 8-d embedding: texts sharing words get similar vectors."""
    v = [0.0] * 8
    for word in text.lower().split():
        v[hashlib.sha256(word.strip("?.!").encode()).digest()[0] % 8] += 1.0
    return v


HTML_502 = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


class StubCohere(JSONStub):
    """Answers /v1/embed and /v2/embed; `fail_with` makes every call fail with that status (`html`: as a page)."""

    calls: list[dict] = []
    fail_with = 0
    html = False
    delay = 0.0

    def reply(self, body: dict) -> tuple[int, dict | Raw]:
        type(self).calls.append(body | {"path": self.path, "auth": self.headers.get("Authorization")})
        time.sleep(self.delay)  # a hung service
        if self.fail_with:
            return self.fail_with, Raw(HTML_502, "text/html") if self.html else {"message": "stub failure"}
        vectors = [vector(t) for t in body["texts"]]
        by_type = {kind: vectors for kind in body.get("embedding_types") or ["float"]}
        meta = {"api_version": {"version": self.path[2]}, "billed_units": {"input_tokens": 3}}
        if self.path == "/v2/embed":
            return 200, {"id": "e1", "texts": body["texts"], "embeddings": by_type, "meta": meta}
        # v1: with embedding_types in the request, Cohere answers "embeddings_by_type".
        return 200, {"id": "e1", "response_type": "embeddings_by_type", "texts": body["texts"],
                     "embeddings": by_type, "meta": meta}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[StubCohere]]:
    StubCohere.calls, StubCohere.fail_with, StubCohere.html, StubCohere.delay = [], 0, False, 0.0
    monkeypatch.setenv("COHERE_API_KEY", "co-test")
    monkeypatch.delenv("RAG_AGENT_EMBEDDING_MODEL", raising=False)
    monkeypatch.setattr(tools.embeddings, "_cache", {})
    with serve(StubCohere) as url:
        monkeypatch.setenv("COHERE_BASE_URL", url)
        yield StubCohere


@pytest.fixture
def agent(stub: type[StubCohere], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Agent]:
    (tmp_path / "docs").mkdir()
    for name, text in PAGES.items():
        (tmp_path / "docs" / name).write_text(text)
    ingest_folder(tmp_path / "docs", data_dir=tmp_path, collection="docs", embeddings=get_embeddings(MODEL),
                  embedding_model=MODEL, progress=False)
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path))
    yield Agent(Context(score_threshold=0.3), InMemorySaver())
    vectorstore.close_clients()


def test_cohere_is_chosen_by_key_and_embeds_documents_and_queries_differently(
        stub: type[StubCohere], agent: Agent) -> None:
    chunk_calls = [c for c in stub.calls if any("Omniverse" in t or "Knead" in t for t in c["texts"])]
    assert chunk_calls and {c["input_type"] for c in chunk_calls} == {"search_document"}
    assert all(c["auth"] == "Bearer co-test" and c["path"] == "/v1/embed" for c in stub.calls)
    stub.calls.clear()
    out = agent.ask("Isaac Sim robotics simulator", "t1")
    assert out["embedding_model"] == MODEL
    assert out["status"] == "grounded" and out["citations"][0]["source"] == "isaac.md"
    assert [c["input_type"] for c in stub.calls] == ["search_query"]  # one embedding per turn


def test_outage_is_retried_by_one_layer_then_reported(stub: type[StubCohere], agent: Agent) -> None:
    stub.calls.clear()
    stub.fail_with = 503
    out = agent.ask("Isaac Sim robotics simulator", "t2")
    assert out["status"] == "error" and out["error"]["code"] == "EMBEDDING_UNAVAILABLE"
    assert len(stub.calls) == 3  # the SDK's call and two retries; langchain-cohere adds none
    stub.fail_with = 0
    assert agent.ask("Isaac Sim robotics simulator", "t2")["status"] == "grounded"


def test_rejected_key_is_not_retried(stub: type[StubCohere], agent: Agent) -> None:
    stub.calls.clear()
    stub.fail_with = 401
    out = agent.ask("Isaac Sim robotics simulator", "t3")
    assert out["error"]["code"] == "EMBEDDING_UNAVAILABLE"
    assert len(stub.calls) == 1


def test_html_error_page_is_reported_without_html(stub: type[StubCohere], agent: Agent) -> None:
    stub.calls.clear()
    stub.fail_with, stub.html = 502, True
    out = agent.ask("Isaac Sim robotics simulator", "t4")
    assert out["error"]["code"] == "EMBEDDING_UNAVAILABLE" and "cohere/embed-english-v3.0" in out["answer"]
    assert "<" not in out["answer"] and "Bad Gateway" not in out["answer"]
    assert len(stub.calls) == 3  # a 502 is retried by the SDK like any 5xx


def test_the_stub_also_serves_the_v2_endpoint(stub: type[StubCohere]) -> None:
    # langchain-cohere 0.6 embeds through cohere.Client, i.e. /v1/embed (pinned above); the v2 client
    # a future version may switch to gets the same vectors and input types from /v2/embed.
    import cohere

    client = cohere.ClientV2("co-test", base_url=os.environ["COHERE_BASE_URL"])
    result = client.embed(model="embed-english-v3.0", texts=["Isaac Sim"], input_type="search_query",
                          embedding_types=["float"])
    assert result.embeddings.float_ == [vector("Isaac Sim")]
    assert stub.calls[-1]["path"] == "/v2/embed" and stub.calls[-1]["input_type"] == "search_query"


def test_hung_embedder_ends_within_the_turn_deadline(stub: type[StubCohere], agent: Agent) -> None:
    stub.calls.clear()
    stub.delay = 5.0
    agent.context = Context(**{**vars(agent.context), "turn_timeout": 3.0})
    start = time.perf_counter()
    out = agent.ask("Isaac Sim robotics simulator", "t5")
    elapsed = time.perf_counter() - start
    assert out["error"]["code"] == "EMBEDDING_UNAVAILABLE"
    # One attempt (the Cohere SDK does not retry a timeout) of a third of the turn, not the client's 30 s.
    assert len(stub.calls) == 1 and elapsed < 2.5
