"""What both the tests and the benchmarks need to run the app for real: a server on a local port (server.py)."""
