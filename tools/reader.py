"""The bundled reading model: how likely a passage answers a question, read by a small cross-encoder on ONNX Runtime."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from logic import bundled_model, reading
from logic.errors import EmbeddingError
from logic.injection import without_instructions
from logic.passages import units
from logic.types import Chunk, Reading
from tools import sentence_store
from tools.settings import get_settings

# The project's own model (training/README.md): two layers of all-MiniLM-L6-v2 fine-tuned as a cross-encoder
# on ../shared's labelled questions, int8. It reads the question and at most this many word pieces in all.
MODEL_FILE = Path(__file__).with_name("reader.onnx")
MAX_TOKENS = 128
_lock = threading.Lock()
_readers: dict[str, Reader] = {}


class Reader:
    """Score (question, passage) pairs: the probability that the passage answers the question."""

    def __init__(self, model_file: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        if threads := get_settings().embedder_threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        # The embedder's word pieces, as the model was trained on; only the passage is ever cut short.
        self._tokenizer = Tokenizer.from_file(str(bundled_model.tokenizer_file()))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def read(self, question: str, passages: list[str]) -> list[float]:
        """Return, for each passage, the probability that it answers `question`."""
        import numpy as np

        if not passages:
            return []
        encoded = self._tokenizer.encode_batch([(question, p) for p in passages])
        feed = {name: np.array([getattr(e, field) for e in encoded], dtype=np.int64)
                for name, field in (("input_ids", "ids"), ("attention_mask", "attention_mask"),
                                    ("token_type_ids", "type_ids"))}
        logits: Any = self._session.run(None, feed)[0]
        return [round(_sigmoid(float(x)), 4) for x in logits]


def _sigmoid(x: float) -> float:
    """Map a logit to a probability without overflowing."""
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def get_reader() -> Reader:
    """Return the process's reader, loaded once (RAG_AGENT_READER_MODEL names another model file)."""
    path = Path(get_settings().reader_model or MODEL_FILE)
    with _lock:
        if str(path) not in _readers:
            if not path.is_file():
                raise EmbeddingError(f"the reading model {path} is missing; reinstall rag-agent")
            _readers[str(path)] = Reader(path)
        return _readers[str(path)]


def read_best(query: str, chunks: list[Chunk], embeddings: Embeddings,
              store: sentence_store.Store | None) -> list[Reading]:
    """Read the passages of `chunks` that the embedder ranks highest; return them best read first.

    Passages are cut from each chunk's text as the answerer quotes it (instructions taken out) and ranked by
    their best unit's cosine with the question, from the vectors ingest stored (`store`) where it has them.
    """
    found: list[tuple[Chunk, reading.Passage, list[float]]] = []
    for chunk in chunks:
        parts = units(without_instructions(chunk["text"]))
        if not parts:
            continue
        scored = sentence_store.cosines(embeddings, store, query, [u.text[:sentence_store.SCORED_CHARS] for u in parts])
        found += [(chunk, p, scored) for p in reading.windows(parts, reading.heading_of(chunk))]
    picked = [found[i] for i in reading.chosen([max(s[k] for k in p.unit_positions) for _, p, s in found])]
    answers = get_reader().read(query, [p.text for _, p, _ in picked])
    out: list[Reading] = [{"chunk_id": c["chunk_id"], "units": list(p.unit_positions), "answers": a}
                          for (c, p, _), a in zip(picked, answers, strict=True)]
    return sorted(out, key=lambda r: -r["answers"])
