"""Timing scripts, run as modules from the checkout: python -m benchmarks.bench_core (see the README)."""
