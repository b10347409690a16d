"""Real third-party services that the functional tests and the benchmarks
install and start."""
