"""``hqa serve``: the engine as an HTTP service (FastAPI) with an evidence page.

``create_app(engine, settings)`` builds the app around one version-following engine (``LiveEngine``);
``admission`` bounds the work waiting for the single-flight LLM; ``auth`` holds the token rule,
``limits`` the size limits, ``errors`` the stable JSON error codes and ``metrics`` the Prometheus text.
"""

from query.serve.app import create_app
from query.serve.settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]
