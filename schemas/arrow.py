"""Derive Arrow schemas from pydantic models, so every table shape is written down once.

The pydantic model is the contract at the boundary (validation, docs, JSON); the Arrow schema is
what Parquet stores. Deriving the second from the first keeps them from drifting apart. Fields
whose Arrow type is narrower than the Python type (int32, timestamps, dictionary-encoded
strings) say so with ``Annotated[..., Arrow(pa.int32())]``.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from functools import cache

import pyarrow as pa
from pydantic import BaseModel


@dataclass(frozen=True)
class Arrow:
    """Annotation marker that fixes the Arrow type of one field."""

    type: pa.DataType


_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    bytes: pa.binary(),
}


def _arrow_type(annotation: object) -> tuple[pa.DataType, bool]:
    """Return (arrow type, nullable) for one field annotation."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        marker = next((e for e in extras if isinstance(e, Arrow)), None)
        inner, nullable = _arrow_type(base)
        return (marker.type if marker else inner), nullable
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"only Optional[X] unions map to Arrow, got {annotation!r}")
        inner, _ = _arrow_type(args[0])
        return inner, True
    if origin is list:
        (item,) = typing.get_args(annotation)
        inner, inner_nullable = _arrow_type(item)
        return pa.list_(pa.field("item", inner, nullable=inner_nullable)), nullable
    if origin is typing.Literal:
        return pa.string(), nullable
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(list(arrow_schema(annotation))), nullable
    if annotation in _SCALARS:
        return _SCALARS[annotation], nullable
    raise TypeError(f"no Arrow mapping for {annotation!r}")


@cache
def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The Arrow schema of a pydantic model; field order follows the model."""
    hints = typing.get_type_hints(model, include_extras=True)
    fields = []
    for name in model.model_fields:
        arrow_type, nullable = _arrow_type(hints[name])
        fields.append(pa.field(name, arrow_type, nullable=nullable))
    return pa.schema(fields, metadata={b"hqa.model": f"{model.__module__}.{model.__qualname__}".encode()})
