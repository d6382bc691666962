"""Confidence: a probability built from the gate's score, the ranking margin and grounding support."""

from __future__ import annotations

import math
import random

import pytest

from logic.confidence import confidence, fit


def test_confidence_rises_with_the_gate_score_and_stays_a_probability() -> None:
    values = [confidence(top, 0.48, [0.9, 0.8]) for top in (-1.0, 0.2, 0.4, 0.48, 0.6, 0.8, 2.0)]
    assert values == sorted(values)
    assert values[0] >= 0 and values[-1] <= 1 and values[0] < 0.1 < 0.9 < values[-1]


def test_unsupported_sentences_scale_confidence_down_and_nothing_retrieved_is_zero() -> None:
    assert confidence(0.7, 0.48, [0.9, 0.5], support=0.5) == pytest.approx(confidence(0.7, 0.48, [0.9, 0.5]) / 2,
                                                                           abs=0.001)
    assert confidence(None, 0.48, []) == 0.0


def test_fit_recovers_the_coefficients_that_generated_the_labels() -> None:
    rng = random.Random(7)
    rows = []
    for _ in range(4000):
        x = (rng.uniform(-0.5, 0.5), rng.uniform(0, 0.3))
        p = 1 / (1 + math.exp(-(-1.0 + 8.0 * x[0] + 3.0 * x[1])))
        rows.append((x, rng.random() < p))
    intercept, gate, lead = fit(rows, l2=0.0)
    assert intercept == pytest.approx(-1.0, abs=0.3)
    assert gate == pytest.approx(8.0, abs=1.0)
    assert lead == pytest.approx(3.0, abs=1.5)
