"""Side-by-side latency benchmarks; run each as `python -m benchmarks.<name>` from the project root."""
