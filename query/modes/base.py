"""What every reasoning mode is: a small class that answers a question it understands, or declines.

A mode gets the question with what the engine already read from it (``Understanding``: the intent and
the linked entities, made once and shared, so no mode re-links) and returns a ``QueryResult`` or a
``Declined`` with its reason. Declining is not failing: the router then asks the next mode, and the
reason goes into ``result.route`` so a user sees why a mode did not answer.

``estimate`` is a mode's cheap guess, before any real work, that it can answer: the router orders modes
by it. A mode that always answers (retrieve → read) gives a constant; a precise one (the KG lookup)
gives 0 when the question names no entity and property it could look up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from query.understand.understanding import Understanding
from schemas.query import QueryResult

__all__ = ["Declined", "Mode", "Understanding"]


@dataclass(frozen=True)
class Declined:
    """A mode's refusal: it cannot answer this question, and says why in words a user understands."""

    mode: str
    reason: str


class Mode(Protocol):
    """A reasoning mode. Implementations must be safe for concurrent ``run`` calls (``ask_many``)."""

    name: str

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        """(how likely this mode answers, in [0, 1]; why), cheaply, before ``run``."""
        ...

    def run(self, understanding: Understanding) -> QueryResult | Declined: ...
