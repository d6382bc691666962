"""The bundled embedder remembers recent queries: a turn's question is embedded once, not per node."""

from __future__ import annotations

from typing import Any

import pytest

from tools import onnx_embedder
from tools.embeddings import LOCAL_MODEL, get_embeddings


def test_a_repeated_query_is_embedded_once_and_callers_get_their_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    model = get_embeddings(LOCAL_MODEL)
    assert isinstance(model, onnx_embedder.OnnxMiniLM)
    runs: list[list[str]] = []
    real = model._batch

    def counted(texts: list[str]) -> Any:
        runs.append(texts)
        return real(texts)
    monkeypatch.setattr(model, "_batch", counted)
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
