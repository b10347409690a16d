"""The benchmarks: what each prints and how to run it is in README.md."""
