"""The reader's page as a per-turn hint: near-ties go to that page's sections, and the hint does not linger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from graph.context import Context
from logic.errors import InvalidInputError
from logic.page_hint import PAGE_BONUS, clean_page_url, page_key, prefer_page


def chunk(url: str, relevance: float) -> dict[str, Any]:
    return {"source_url": url, "score": relevance - 0.1, "relevance": relevance}


@pytest.mark.parametrize(("url", "key"), [
    ("https://docs.example.com/guide/install#pip", "/guide/install"),
    ("https://docs.example.com/guide/install/", "/guide/install"),
    ("/demo/isaac-sim#synthetic-data", "/demo/isaac-sim"),
    ("isaac-sim.md#synthetic-data", "/isaac-sim"),
    ("https://docs.example.com/guide/index.html?x=1", "/guide"),
])
def test_links_and_page_urls_name_the_same_page(url: str, key: str) -> None:
    assert page_key(url) == key


def test_a_near_tie_goes_to_the_readers_page_but_a_clearly_better_match_stays_first() -> None:
    chunks = [chunk("/docs/a#x", 0.70), chunk("/docs/b#y", 0.68), chunk("/docs/c#z", 0.40)]
    preferred = prefer_page(chunks, "https://site.example/docs/b")
    assert [c["source_url"] for c in preferred] == ["/docs/b#y", "/docs/a#x", "/docs/c#z"]
    assert preferred[0]["relevance"] == pytest.approx(0.68 + PAGE_BONUS)
    far = prefer_page(chunks, "https://site.example/docs/c")
    assert [c["source_url"] for c in far][0] == "/docs/a#x"
    assert prefer_page(chunks, "") == chunks


def test_bad_hints_are_refused_by_name() -> None:
    with pytest.raises(InvalidInputError, match="page_url must be a string"):
        clean_page_url(42)
    with pytest.raises(InvalidInputError, match="page_url is 3000 characters long"):
        clean_page_url("x" * 3000)


def test_the_hint_reaches_retrieval_for_one_turn_only(app: Any, make_context: Callable[..., Context]) -> None:
    config = {"configurable": {"thread_id": "hint"}}

    def question() -> dict[str, Any]:
        return {"messages": [HumanMessage("What is Isaac Sim?")]}

    plain = app.invoke(question(), config, context=make_context())
    hinted = app.invoke({**question(), "page_url": "https://site.example/isaac-sim"}, config, context=make_context())
    on_page = [c for c in hinted["retrieved"] if c["source"] == "isaac-sim.md"]
    before = {c["chunk_id"]: c["relevance"] for c in plain["retrieved"]}
    assert on_page and all(c["relevance"] == pytest.approx(before[c["chunk_id"]] + PAGE_BONUS) for c in on_page)
    assert hinted["top_score"] == plain["top_score"], "the hint never moves the score gate"
    state = app.get_state(config).values
    assert state.get("page_url", "") == "" and state["page_hint"] == "https://site.example/isaac-sim"
    after = app.invoke(question(), config, context=make_context())
    assert app.get_state(config).values["page_hint"] == ""
    assert [c["relevance"] for c in after["retrieved"]] == [c["relevance"] for c in plain["retrieved"]]
    refused = app.invoke({**question(), "page_url": 7}, config, context=make_context())
    assert refused["status"] == "error" and "page_url must be a string" in refused["answer"]
