"""One shape for every registry of the engine: a name → a factory of one typed argument.

Modes, retrievers, readers, pair scorers, LLM backends and intent extractors are each picked by a name a
config gives (``modes = ["kg-lookup", …]``, ``reader = "llm"``, ``llm.backend = "gguf"``). Each registry
maps the name to a factory that takes one argument — the component's settings, or a small context
holding its settings and the parts of the opened index it reads — so adding a backend is adding one
factory, and an unknown name fails the same way everywhere: naming what was asked and what is known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

ArgT = TypeVar("ArgT")
T = TypeVar("T")


class Registry(Generic[ArgT, T]):
    """Factories by name; ``create(name, arg)`` builds one. ``kind`` names the family in errors."""

    def __init__(self, kind: str, factories: dict[str, Callable[[ArgT], T]] | None = None):
        self.kind = kind
        self._factories: dict[str, Callable[[ArgT], T]] = dict(factories or {})

    def register(self, name: str, factory: Callable[[ArgT], T]) -> None:
        """Add a factory; a name registered twice is a mistake, not an override."""
        if name in self._factories:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        self._factories[name] = factory

    def check(self, name: str) -> str:
        """``name`` if registered, else a ``ValueError`` listing the known names (for config validators)."""
        if name not in self._factories:
            raise ValueError(f"unknown {self.kind} {name!r}; known: {', '.join(self._factories)}")
        return name

    def create(self, name: str, arg: ArgT) -> T:
        return self._factories[self.check(name)](arg)

    def names(self) -> list[str]:
        return list(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)
