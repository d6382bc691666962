"""Helpers shared by the benchmarks: the machine line, interleaved timing and paired ratios."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Sequence


def machine() -> str:
    """Describe the machine a run happened on, so absolute times can be read in context."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    cpu = platform.processor() or platform.machine()
    return (
        f"machine: {platform.platform()} | {cpu} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} ({sys.implementation.name}) | load avg {load}"
    )


def rotations(names: Sequence[str], repetition: int) -> list[str]:
    """Return the order to run the sides in on one repetition: rotated so no side is always first."""
    shift = repetition % len(names)
    return [*names[shift:], *names[:shift]]


def paired_ratios(numerator: Sequence[float], denominator: Sequence[float]) -> list[float]:
    """Divide paired measurements taken back to back (same question, same repetition)."""
    if len(numerator) != len(denominator):
        raise ValueError(f"unpaired samples: {len(numerator)} vs {len(denominator)}")
    return [n / d for n, d in zip(numerator, denominator, strict=True) if d > 0]


def median_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Return the median of paired ratios: robust to a noisy neighbour slowing one pair."""
    return statistics.median(paired_ratios(numerator, denominator))


def ratio_of_medians(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Return median(numerator) / median(denominator)."""
    return statistics.median(numerator) / statistics.median(denominator)


def ms(seconds: float) -> str:
    """Format seconds as milliseconds with a precision that suits the magnitude."""
    value = seconds * 1000
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 100 else f"{value:.0f}"


def verdict(ratio: float, goal: float) -> str:
    """Say whether a measured ratio meets a ceiling."""
    return f"{'MET' if ratio <= goal else 'NOT MET'} (goal <= {goal:.2f}x, measured {ratio:.3f}x)"
