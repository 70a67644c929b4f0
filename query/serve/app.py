"""The app: routes over one ``Answering`` (engine, lanes, metrics), opened by the lifespan.

``create_app(open_engine, reader, settings)`` returns the FastAPI app; ``open_engine`` is called once, in
a thread, when the server starts (``/readyz`` says 503 until it returns), and the engine is closed when
the server stops. Requests see only what ``routes`` defines; the page and its assets are package data.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from query.live import LiveEngine
from query.serve.answering import Answering
from query.serve.errors import install_error_handlers
from query.serve.limits import BodyLimit
from query.serve.metrics import Metrics
from query.serve.observe import Observed
from query.serve.routes import api, pages
from query.serve.settings import ServeSettings

log = logging.getLogger(__name__)

TITLE = "hqa"
DESCRIPTION = (
    "Hybrid question answering over Wikipedia and Wikidata. Every answer is the engine's QueryResult "
    "(mode, route, evidence with provenance, table and SQL, refinement, timings) with `served`: the "
    "lane, the wait and whether the LLM queue was full and the candidate reader answered instead."
)


def create_app(
    open_engine: Callable[[], LiveEngine], reader: str, settings: ServeSettings | None = None
) -> FastAPI:
    """``reader``: the engine's configured reader, ``"llm"`` or ``"candidates"`` (which lane it needs)."""
    settings = settings or ServeSettings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = await asyncio.to_thread(open_engine)
        app.state.engine = engine
        app.state.answering = Answering(engine, reader, settings, metrics)
        log.info("answering from index %s with the %s reader", engine.version, reader)
        try:
            yield
        finally:
            answering, app.state.answering = app.state.answering, None
            await asyncio.to_thread(_close, answering, engine)

    app = FastAPI(title=TITLE, description=DESCRIPTION, version="1", lifespan=lifespan)
    app.state.settings, app.state.metrics, app.state.answering = settings, metrics, None
    install_error_handlers(app)
    app.include_router(api.router)
    app.include_router(pages.router)
    pages.mount_static(app)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(Observed, metrics=metrics)
    return app


def _close(answering: Answering, engine: LiveEngine) -> None:
    """The lanes' threads finish what they run, then the engine (and its index lease) is closed."""
    answering.close()
    engine.close()
