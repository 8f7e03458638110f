"""What both the tests and the benchmarks need to run the app for real: a server on a local port (server.py),
replicas behind nginx (cluster.py), a websocket student (websocket_client.py), new sentences for the real-model
page (sentences.py)."""
