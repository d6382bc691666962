"""`rag-agent config` says what is in use and why; the manifest's threshold follows calibration."""

import json

import pytest

from logic import answerability
from rag_agent.cli.commands import main
from tools import manifest


def config(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, str]:
    assert main([*args, "config", "--json"]) == 0
    result: dict[str, str] = json.loads(capsys.readouterr().out)
    return result


def test_offline_defaults_are_explained(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = config(capsys, "--data-dir", str(tmp_path))
    assert out["chat"] == "extractive answers (no OPENAI_API_KEY)"
    assert out["embeddings"] == "local/all-MiniLM-L6-v2 (no COHERE_API_KEY: the bundled local model)"
    assert out["vector_store"].startswith("embedded snapshots in ") and "(no QDRANT_URL)" in out["vector_store"]
    assert out["collection"] == "docs (not ingested yet)"
    assert out["score_threshold"].startswith(f"{manifest.default_threshold('local/all-MiniLM-L6-v2')} (default")


def test_keys_switch_to_real_services(tmp_path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("COHERE_API_KEY", "co-x")
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:6333")
    out = config(capsys, "--data-dir", str(tmp_path))
    assert out["chat"] == "openai/gpt-4o-mini (OPENAI_API_KEY is set, OPENAI_BASE_URL=http://127.0.0.1:9/v1)"
    assert out["embeddings"] == "cohere/embed-english-v3.0 (COHERE_API_KEY is set)"
    assert out["vector_store"] == "Qdrant server http://127.0.0.1:6333 (QDRANT_URL)"


def test_a_copied_default_threshold_follows_the_shipped_default_but_a_calibration_sticks() -> None:
    info = {"embedding_model": "local/all-MiniLM-L6-v2", "threshold": 0.11}
    assert manifest.threshold(info) == manifest.default_threshold("local/all-MiniLM-L6-v2")
    calibrated = {"balanced_accuracy": 1.0, "gate": answerability.GATE_VERSION}
    assert manifest.threshold({**info, "calibration": calibrated}) == 0.11
    # A calibration of the earlier cosine-based score does not carry over to the answerability score.
    stale = {**info, "calibration": {"balanced_accuracy": 1.0}}
    assert manifest.threshold(stale) == manifest.default_threshold("local/all-MiniLM-L6-v2")

    # Why the turn gates with the default, said where `rag-agent config` shows it.
    assert manifest.resolve_threshold(None, {**info, "calibration": calibrated}, "")[1] == "calibrated for this index"
    assert "calibrate again" in manifest.resolve_threshold(None, stale, "")[1]
    assert manifest.resolve_threshold(None, info, "")[1] == "the embedder's default"

def test_config_shows_an_ingested_collection(data_dir: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = config(capsys, "--data-dir", data_dir)
    assert out["collection"].startswith("docs (") and out["collection"].endswith(" chunks)")
    assert "the embedder's default" in out["score_threshold"]
