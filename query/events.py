"""What answering a question does while it runs, told to whoever listens: the router's steps as each mode
decides, the LLM's tokens as they are generated.

The server's event stream (``GET /v1/ask/stream``) listens; a library caller or the batch job does not,
and then nothing is built or sent. The listener is a context variable, set by ``listened`` in the thread
that answers, so two questions answered side by side on two threads never hear each other. It is called
on the answering thread: it must be quick and must not raise (the server's listener only puts the event
on its loop's queue); one that raises is dropped for the rest of the answer, the answer goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]
"""Called with an event's name (``route``, ``token``) and its JSON-ready data."""

_LISTENER: ContextVar[Listener | None] = ContextVar("hqa_answer_listener", default=None)


def listening() -> bool:
    """Whether an event would reach anyone (so that building one can be skipped)."""
    return _LISTENER.get() is not None


def emit(name: str, data: dict[str, Any]) -> None:
    listener = _LISTENER.get()
    if listener is None:
        return
    try:
        listener(name, data)
    except Exception:  # the listener's failure is never the answer's
        log.warning("the answer's listener failed on a %r event; it hears no more of this answer", name)
        _LISTENER.set(None)


@contextmanager
def listened(listener: Listener) -> Iterator[None]:
    """Events emitted inside the block, on this thread, go to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
