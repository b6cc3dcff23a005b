"""Runnable benchmarks (`python -m benchmarks ...`): they print JSON and are never tests."""
