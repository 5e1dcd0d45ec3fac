"""The benchmarks: run each from the repository's root as ``python -m bench.<name>``
(docs/benchmarks.md)."""
