"""The benchmarks' pure helpers: side rotation, paired ratios, synthetic chunks (the benchmarks are scripts)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks._common import median_ratio, paired_ratios, ratio_of_medians, rotations, verdict
from benchmarks.scale import _profile, synthetic_texts


def test_rotations_put_every_side_first_equally_often() -> None:
    sides = ["hand", "graph", "graph-nocp"]
    firsts = [rotations(sides, turn)[0] for turn in range(6)]
    assert firsts == ["hand", "graph", "graph-nocp"] * 2
    assert all(sorted(rotations(sides, turn)) == sorted(sides) for turn in range(6))


def test_paired_ratios_divide_pairs_and_refuse_unpaired_samples() -> None:
    assert paired_ratios([2.0, 3.0], [1.0, 2.0]) == [2.0, 1.5]
    with pytest.raises(ValueError, match="unpaired"):
        paired_ratios([1.0], [1.0, 2.0])


def test_median_of_paired_ratios_ignores_one_slow_outlier_pair() -> None:
    graph = [1.1, 1.1, 1.1, 50.0]
    hand = [1.0, 1.0, 1.0, 1.0]
    assert median_ratio(graph, hand) == pytest.approx(1.1)
    assert ratio_of_medians(graph, hand) == pytest.approx(1.1)


def test_verdict_names_the_goal_and_the_measurement() -> None:
    assert verdict(1.05, 1.10).startswith("MET")
    assert verdict(1.2, 1.10).startswith("NOT MET")


def test_synthetic_chunks_keep_each_words_document_frequency_and_the_chunk_length() -> None:
    # "step" is bursty (three times in one chunk of four): it must stay in a quarter of the chunks, not most.
    real = ["step step step robot arm", "robot base", "gripper robot", "arm"] * 5
    words, share, per_chunk = _profile(real)
    texts = synthetic_texts(np.random.default_rng(0), 4000, words, share, per_chunk)

    def held(word: str, chunks: list[str]) -> float:
        return sum(word in c.split() for c in chunks) / len(chunks)

    for word in ["step", "robot", "arm", "base", "gripper"]:
        assert held(word, texts) == pytest.approx(held(word, real), abs=0.03)
    assert np.mean([len(t.split()) for t in texts]) == pytest.approx(np.mean([len(r.split()) for r in real]), rel=0.05)
