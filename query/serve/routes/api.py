"""The API: ``/v1/ask``, ``/v1/ask/stream`` (server-sent events), ``/v1/batch``, ``/v1/versions``,
``/healthz``, ``/readyz``, ``/metrics``. Every ``/v1`` route and ``/metrics`` need the token when the
server has one; every error is JSON (``query.serve.errors``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from fastapi.sse import EventSourceResponse, format_sse_event

from index.versions import VersionStore
from query.serve.answering import Answering, Ticket
from query.serve.auth import require_token
from query.serve.errors import ApiError
from query.serve.models import (
    AskRequest,
    BatchItem,
    BatchRequest,
    BatchResponse,
    ErrorResponse,
    Health,
    ServedResult,
    VersionsInfo,
)

T = TypeVar("T")
DISCONNECT_POLL_S = 0.25

ERRORS = {
    401: {"model": ErrorResponse, "description": "the token is missing or wrong"},
    413: {"model": ErrorResponse, "description": "the body or the question is too large"},
    422: {"model": ErrorResponse, "description": "the request or the question is not valid"},
    429: {"model": ErrorResponse, "description": "the queue is full: see Retry-After, or send fallback"},
    503: {"model": ErrorResponse, "description": "the engine is still opening"},
    504: {"model": ErrorResponse, "description": "the request's deadline passed"},
}

router = APIRouter()
v1 = APIRouter(prefix="/v1", dependencies=[Depends(require_token)], responses=ERRORS)


def answering(request: Request) -> Answering:
    ready = request.app.state.answering
    if ready is None:
        raise ApiError(503, "not_ready", "the engine is still opening the index; retry in a few seconds")
    return ready


Engine = Annotated[Answering, Depends(answering)]


async def until_disconnect(request: Request, work: Awaitable[T]) -> T:
    """``work``'s result; if the client goes away first, ``work`` is cancelled (which frees its place
    in the queue) and the request ends with 499, which no client reads."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_S)
        if done:
            return task.result()
        if await request.is_disconnected():
            task.cancel()
            request.app.state.metrics.disconnects.inc()
            raise ApiError(499, "client_disconnected", "the client went away before its answer")


@v1.post("/ask", response_model=ServedResult)
async def ask(body: AskRequest, request: Request, engine: Engine) -> Response:
    deadline = engine.deadline(body.deadline_s)
    result = await until_disconnect(request, engine.ask(body.question, body.reader, body.fallback, deadline))
    return Response(result.model_dump_json(), media_type="application/json")


@v1.get(
    "/ask/stream",
    response_class=Response,
    responses={200: {"content": {"text/event-stream": {}}, "description": "the events, then the result"}},
)
async def ask_stream(
    engine: Engine,
    question: Annotated[str, Query(description="the question")],
    fallback: bool = False,
    reader: Annotated[str, Query(pattern="^(configured|candidates)$")] = "configured",
    deadline_s: Annotated[float | None, Query(gt=0)] = None,
) -> EventSourceResponse:
    """Events: ``admitted`` (lane, fallback); then, as they happen, ``route`` (each mode's outcome the
    moment it is decided), ``llm`` (a request to the model begins: its purpose) and ``token`` (the model's
    text as it is generated); then ``reading`` (the LLM's account, when it read) and ``result`` (the whole
    answer) — or ``error`` (code, message). Refusals before admission (401, 413, 422, 429) are plain JSON
    errors with their status."""
    ticket = engine.admit(question, reader, fallback)
    deadline = engine.deadline(deadline_s)
    return EventSourceResponse(_events(engine, ticket, deadline))


async def _events(engine: Answering, ticket: Ticket, deadline: float) -> AsyncIterator[bytes]:
    admitted = {"lane": ticket.lane.name, "fallback": ticket.fallback, "reason": ticket.why}
    yield _event("admitted", admitted)
    loop = asyncio.get_running_loop()
    heard: asyncio.Queue[tuple[str, dict]] = asyncio.Queue()

    def listener(name: str, data: dict) -> None:  # on the lane's thread: hand the event to this loop
        loop.call_soon_threadsafe(heard.put_nowait, (name, data))

    answering = asyncio.ensure_future(engine.run(ticket, deadline, listener))
    try:
        while not answering.done():
            next_event = asyncio.ensure_future(heard.get())
            await asyncio.wait({next_event, answering}, return_when=asyncio.FIRST_COMPLETED)
            if next_event.done():
                yield _event(*next_event.result())
            else:
                next_event.cancel()
        while not heard.empty():  # told before the answer returned (the loop runs callbacks in order)
            yield _event(*heard.get_nowait())
        try:
            result = answering.result()
        except ApiError as exc:
            yield _event("error", exc.body.model_dump(mode="json"))
            return
    finally:
        answering.cancel()  # the client went away: its lane slot is freed once the engine returns
    if result.reading is not None:
        yield _event("reading", result.reading.model_dump(mode="json"))
    yield _event("result", result.model_dump(mode="json"))


def _event(name: str, data: dict) -> bytes:
    return format_sse_event(data_str=json.dumps(data), event=name)


@v1.post("/batch", response_model=BatchResponse)
async def batch(body: BatchRequest, request: Request, engine: Engine) -> Response:
    """The questions in order, one at a time (a batch takes one place in a queue at a time, so it never
    crowds out single questions); each item is its answer or its own error, the others go on."""
    limit = request.app.state.settings.max_batch
    if len(body.questions) > limit:
        message = f"the batch has {len(body.questions)} questions; this server takes at most {limit}"
        raise ApiError(413, "batch_too_large", message)
    deadline = engine.deadline(body.deadline_s)
    items = []
    for i, question in enumerate(body.questions):
        try:
            answer = engine.ask(question, body.reader, body.fallback, deadline)
            items.append(BatchItem(index=i, result=await until_disconnect(request, answer)))
        except ApiError as exc:
            if exc.code == "client_disconnected":
                raise
            items.append(BatchItem(index=i, error=exc.body))
    return Response(BatchResponse(results=items).model_dump_json(), media_type="application/json")


@v1.get("/versions", response_model=VersionsInfo)
async def versions(request: Request, engine: Engine) -> VersionsInfo:
    live = request.app.state.engine
    store = VersionStore(live.root)
    current = store.current()
    return VersionsInfo(
        answering=live.version,
        current=current.name if current is not None else None,
        available=[p.name for p in store.versions()],
        answered_from=list(live.switches),
        open=live.open_versions,
    )


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up (it may still be opening the index: see ``/readyz``)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Health, responses={503: {"model": Health}})
async def readyz(request: Request) -> Response:
    answering = request.app.state.answering
    if answering is None:
        return JSONResponse(Health(status="not ready").model_dump(), status_code=503)
    health = Health(status="ok", version=request.app.state.engine.version, reader=answering.reader)
    return JSONResponse(health.model_dump())


@router.get("/metrics", dependencies=[Depends(require_token)], response_class=Response)
async def metrics(request: Request) -> Response:
    """Prometheus text format."""
    return Response(request.app.state.metrics.text(), media_type="text/plain; version=0.0.4")


router.include_router(v1)
