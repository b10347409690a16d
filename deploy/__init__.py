"""Deployment material: compose files, the Dockerfile, generator configs,
broker scripts, and ``testbed``, the real-process launcher that the
functional tests and the benchmarks share (never installed with Ashlar)."""
