"""Confidence: a probability built from the gate's score, what the answer states, the ranking margin and support."""

from __future__ import annotations

import math
import random

import pytest

from logic.confidence import FLAG_BELOW, answer_confidence, confidence, fit, stated


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


def test_an_answer_is_as_confident_as_what_it_states_of_the_question() -> None:
    question = "How do I enable HTTP/2 on the client?"
    states = "Pass http2=True when you create the client to enable HTTP/2."
    misses = "HTTP/1.1 is the default because it is the most widely supported protocol."
    sure, unsure = (answer_confidence(0.95, 0.25, question, a) for a in (states, misses))
    assert sure > unsure > FLAG_BELOW
    # An answer that states nothing asked is less likely right than one that states it, however well retrieved.
    assert answer_confidence(1.0, 0.25, question, "Connection pools are kept per host.") < \
        answer_confidence(1.0, 0.25, question, states)
    # Weaker retrieval, less confidence for the same words; sentences the sources do not support scale it down.
    assert answer_confidence(0.4, 0.25, question, states) < sure
    assert answer_confidence(0.95, 0.25, question, states, support=0.5) == round(sure / 2, 3)


def test_an_answer_about_a_selection_is_judged_on_what_the_question_asks_of_it() -> None:
    question, answer = "Explain the retry code in this selection.", "Each retry waits twice as long as the last one."
    # "explain", "code", "selection" name the task: an answer that states "retry" states all that was asked.
    assert stated(question, answer) < stated(question, answer, asked=["retry"]) == 1.0
    assert answer_confidence(1.0, 0.75, question, answer, asked=["retry"]) > \
        answer_confidence(1.0, 0.75, question, answer)
    # "Summarize this" asks for nothing in particular: no share of it is left unstated.
    assert stated("Summarize this.", answer, asked=[]) == 1.0 and stated("Summarize this.", answer) == 0.0
