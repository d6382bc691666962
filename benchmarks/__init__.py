"""Benchmark scripts and their pure scoring helpers (not part of the installed product)."""
