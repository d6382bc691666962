"""Benchmark scripts and their helpers (not part of the installed product); run as `python -m benchmarks.<name>`."""
