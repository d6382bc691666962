"""The `indexer` graph run through its compiled graph: allowed folders only, admins only, incremental."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph.builder import compile_graph
from graph.indexer import NotAllowedError, graph
from logic.errors import InvalidInputError
from tests.tiny_corpus import CORPUS
from tests.unit.site import Site, write_site


@pytest.fixture()
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    docs = tmp_path / "site" / "docs"
    docs.mkdir(parents=True)
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("RAG_AGENT_INDEX_SOURCES", f"{tmp_path / 'site'},https://docs.example.com/guide")
    monkeypatch.setenv("RAG_AGENT_ADMINS", "root")
    monkeypatch.delenv("RAG_AGENT_API_KEYS", raising=False)
    # The data dir belongs to the deployment (its settings), never to a run's context.
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(tmp_path / "data"))
    return {"docs": docs, "data": tmp_path / "data", "context": {"embedding_model": "hash/256"}}


def run_as(user: str | None, source: str, context: dict[str, str]) -> dict[str, Any]:
    # The server puts the authenticated user here; a plain Python call has none.
    config = {"configurable": {"langgraph_auth_user_id": user}} if user else {}
    return dict(graph.invoke({"source": source}, config, context=context))


def test_admin_reindexes_incrementally_and_the_agent_answers_from_it(setup: dict[str, Any]) -> None:
    docs, context = setup["docs"], setup["context"]
    first = run_as("root", str(docs), context)
    assert (first["added"], first["unchanged"], first["collection"]) == (2, 0, "docs")
    assert first["chunks"] > 0
    (docs / "baking.md").write_text(CORPUS["baking.md"] + "\n## Cooling\n\nCool the loaf on a rack.\n", "utf-8")
    second = run_as("root", str(docs), context)
    assert (second["added"], second["updated"], second["unchanged"]) == (0, 1, 1)
    agent = compile_graph()
    answer = agent.invoke({"messages": [{"role": "user", "content": "Where do I cool the loaf?"}]},
                          context=context | {"score_threshold": 0.2})
    assert answer["status"] == "grounded", answer["answer"]
    assert any("Cool the loaf on a rack" in citation["text"] for citation in answer["citations"])


def test_non_admin_is_refused_before_anything_is_read(setup: dict[str, Any]) -> None:
    with pytest.raises(NotAllowedError, match="user 'bob' may not re-index: only the users in RAG_AGENT_ADMINS"):
        run_as("bob", str(setup["docs"]), setup["context"])
    assert not Path(setup["data"]).exists()


def test_local_user_may_reindex_only_when_the_server_has_no_keys(setup: dict[str, Any],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_as("local", str(setup["docs"]), setup["context"])["added"] == 2
    monkeypatch.setenv("RAG_AGENT_API_KEYS", "local:tok")
    with pytest.raises(NotAllowedError, match="'local' may not re-index"):
        run_as("local", str(setup["docs"]), setup["context"])


@pytest.mark.parametrize("source", ["/etc", "{docs}/../../../outside", "https://docs.example.com/guide-private",
                                    "https://evil.example.com/guide", "http://docs.example.com/guide",
                                    # Issue 23: encoded dot segments and `//` resolve outside /guide.
                                    "https://docs.example.com/guide/%2e%2e/private/",
                                    "https://docs.example.com/guide/..%2Fprivate/",
                                    "https://docs.example.com/guide//../private/sitemap.xml"])
def test_sources_outside_the_allow_list_are_refused_by_name(setup: dict[str, Any], source: str) -> None:
    source = source.format(docs=setup["docs"])
    with pytest.raises(NotAllowedError, match="is not in RAG_AGENT_INDEX_SOURCES"):
        run_as("root", source, setup["context"])


def test_without_an_allow_list_reindexing_is_off(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_AGENT_INDEX_SOURCES")
    with pytest.raises(NotAllowedError, match="re-indexing from the server is off: set RAG_AGENT_INDEX_SOURCES"):
        run_as("root", str(setup["docs"]), setup["context"])


def test_nightly_reindex_of_a_site_skips_pages_unchanged_since_the_last_run(
        setup: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "served"
    root.mkdir()
    site = Site(root, validators={"etag"})
    try:
        write_site(root, site.port, lastmod={"docs/module-1/intro": "2024-05-01", "docs/module-1/setup": "2024-05-01"})
        monkeypatch.setenv("RAG_AGENT_INDEX_SOURCES", site.url)
        first = run_as("root", f"{site.url}/sitemap.xml", setup["context"])
        assert (first["added"], first["fetched"], first["changed"]) == (3, 3, 3)
        second = run_as("root", f"{site.url}/sitemap.xml", setup["context"])
        assert (second["unchanged"], second["unchanged_lastmod"], second["unchanged_304"]) == (3, 2, 1)
        assert (second["fetched"], second["changed"], second["removed"]) == (0, 0, 0)
        assert site.hits["/docs/module-1/intro/"] == 1 and site.not_modified == {"/docs/module-2/sensors/": 1}
    finally:
        site.close()


@pytest.mark.parametrize(("given", "message"), [
    ({"messages": [{"role": "user", "content": "What is Isaac Sim?"}]}, "input has no 'source' field"),
    ({"source": 5}, "'source' field must be text"),
    ({"source": "{docs}", "include": "*.md"}, "'include' field must be list"),
])
def test_input_that_is_not_an_index_request_is_a_clear_input_error(setup: dict[str, Any], given: dict[str, Any],
                                                                    message: str) -> None:
    if isinstance(given.get("source"), str):
        given = given | {"source": given["source"].format(docs=setup["docs"])}
    with pytest.raises(InvalidInputError, match=message) as raised:
        graph.invoke(given, {"configurable": {"langgraph_auth_user_id": "root"}}, context=setup["context"])
    assert isinstance(raised.value, ValueError)  # the server shows a ValueError's message to the caller
    assert not Path(setup["data"]).exists()  # refused before anything was read or written
