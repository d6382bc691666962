"""The bundled embedder: recent queries remembered, passages embedded by their openings."""

from __future__ import annotations

from typing import Any

import pytest

from tools import onnx_embedder
from tools.embeddings import LOCAL_MODEL, get_embeddings


def test_a_repeated_query_is_embedded_once_and_callers_get_their_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    model = get_embeddings(LOCAL_MODEL)
    assert isinstance(model, onnx_embedder.OnnxMiniLM)
    runs: list[list[list[int]]] = []
    real = model._run

    def counted(pieces: list[list[int]]) -> Any:
        runs.append(pieces)
        return real(pieces)
    monkeypatch.setattr(model, "_run", counted)
    first = model.embed_query("How are launch arguments declared in a remembered-query test?")
    first[0] += 1.0  # a caller's copy: changing it changes nothing remembered
    second = model.embed_query("How are launch arguments declared in a remembered-query test?")
    assert len(runs) == 1 and second == pytest.approx(model.embed_documents(
        ["How are launch arguments declared in a remembered-query test?"])[0], abs=1e-5)
    assert first[0] == pytest.approx(second[0] + 1.0)
    for n in range(onnx_embedder.QUERY_CACHE):  # pushed out by as many newer queries
        model.embed_query(f"filler question {n}")
    runs.clear()
    model.embed_query("How are launch arguments declared in a remembered-query test?")
    assert len(runs) == 1


def test_an_opening_is_embedded_without_what_follows_it() -> None:
    model = get_embeddings(LOCAL_MODEL)
    assert isinstance(model, onnx_embedder.OnnxMiniLM)
    short = "Run mkdocs serve to preview the site."
    long = ("To preview the site while you write, run the development server from the project folder; it rebuilds "
            "the pages whenever a file changes and reloads the browser")
    longer = long + " and it also serves the theme's static files, the search index and every extra page you add."
    # A text shorter than the opening is embedded whole; a longer one only as far as its opening.
    assert model.embed_openings([short], 32)[0] == pytest.approx(model.embed_documents([short])[0], abs=1e-5)
    opened = model.embed_openings([long, longer], 32)
    assert opened[0] == pytest.approx(opened[1], abs=1e-5)
    assert model.embed_documents([longer])[0] != pytest.approx(opened[1], abs=1e-3)
    # Batches mixing lengths give each text its own vector, in order.
    mixed = model.embed_openings([longer, short], 32)
    assert mixed[0] == pytest.approx(opened[1], abs=1e-5)
    assert mixed[1] == pytest.approx(model.embed_documents([short])[0], abs=1e-5)


def test_long_texts_are_embedded_in_small_batches_and_keep_their_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    model = get_embeddings(LOCAL_MODEL)
    assert isinstance(model, onnx_embedder.OnnxMiniLM)
    chunk = " ".join(f"Step {n}: the launch file starts node {n} with its parameters." for n in range(40))
    texts = [chunk, "Short one.", chunk.replace("node", "process"), "Another short text."]
    alone = [model.embed_documents([t])[0] for t in texts]
    sizes: list[int] = []
    real = model._run

    def counted(pieces: list[list[int]]) -> Any:
        sizes.append(len(pieces) * max(len(p) for p in pieces))
        return real(pieces)
    monkeypatch.setattr(model, "_run", counted)
    together = model.embed_documents(texts)
    # The two 256-piece chunks go one per call (a batch of them waits on memory), the short texts together.
    assert len(sizes) == 3 and max(sizes) == onnx_embedder.MAX_TOKENS
    assert all(v == pytest.approx(a, abs=1e-5) for v, a in zip(together, alone, strict=True))
