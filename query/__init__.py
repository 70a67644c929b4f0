"""The query engine and the ``hqa`` command line.

``from query import Engine`` is the library entry point; it is imported lazily so that light users of
this package (the CLI's other commands, the DAGs) do not load models and indexes they never use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from query.config import EngineConfig
    from query.engine import Engine

__all__ = ["Engine", "EngineConfig"]


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from query.engine import Engine

        return Engine
    if name == "EngineConfig":
        from query.config import EngineConfig

        return EngineConfig
    raise AttributeError(f"module 'query' has no attribute {name!r}")
