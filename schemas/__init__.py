"""Table shapes shared by every layer: pydantic row models and the Arrow schemas derived from them.

This package imports nothing else of hqa, so any layer may depend on it.
"""

from schemas.arrow import Arrow, arrow_schema

__all__ = ["Arrow", "arrow_schema"]
