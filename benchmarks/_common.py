"""Helpers shared by the benchmarks: the machine line a run's absolute times are read against."""

from __future__ import annotations

import os
import platform
import sys


def machine() -> str:
    """Describe the machine a run happened on, so absolute times can be read in context."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    cpu = platform.processor() or platform.machine()
    return (
        f"machine: {platform.platform()} | {cpu} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} ({sys.implementation.name}) | load avg {load}"
    )
