"""The service's routes: ``api`` (the JSON and event-stream API, health, metrics) and ``pages`` (the
evidence page and its offline assets)."""
