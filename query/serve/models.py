"""What the service takes and returns. An answer is the engine's ``QueryResult`` itself (its schema grows
with the engine's) plus one ``served`` field saying how the service answered it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from schemas.query import QueryResult

Lane = Literal["llm", "fast"]


class AskRequest(BaseModel):
    question: str = Field(description="the question; its length is limited by the server's settings")
    fallback: bool = Field(
        False,
        description="when the LLM queue is full, answer with the candidate reader (and say so) "
        "instead of 429",
    )
    reader: Literal["configured", "candidates"] = Field(
        "configured", description="'candidates' skips the LLM even when the server reads with one"
    )
    deadline_s: float | None = Field(
        None, gt=0, description="seconds this request may take, queue included; capped by the server"
    )


class BatchRequest(BaseModel):
    questions: list[str] = Field(min_length=1, description="answered in order; at most the server's max")
    fallback: bool = False
    reader: Literal["configured", "candidates"] = "configured"
    deadline_s: float | None = Field(None, gt=0, description="for the whole batch")


class Served(BaseModel):
    """How the service answered: which lane, how long it waited, and whether it fell back."""

    lane: Lane
    fallback: bool = Field(description="the LLM queue was full and the candidate reader answered")
    fallback_reason: str | None = None
    queued_ms: float = Field(ge=0, description="time waiting for a slot")
    answer_ms: float = Field(ge=0, description="time the engine took once admitted")


class ServedResult(QueryResult):
    """The engine's result as it is, with how the service answered it."""

    served: Served


class BatchItem(BaseModel):
    """One question of a batch: its answer, or the error that question met (the others go on)."""

    index: int
    result: ServedResult | None = None
    error: ErrorBody | None = None


class BatchResponse(BaseModel):
    results: list[BatchItem]


class ErrorBody(BaseModel):
    code: str = Field(description="stable: clients branch on it")
    message: str = Field(description="what went wrong and what to do next")
    retry_after_s: float | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


class VersionsInfo(BaseModel):
    answering: str = Field(description="the version new questions are answered from")
    current: str | None = Field(description="the version 'current' names on disk now")
    available: list[str] = Field(description="published versions on disk, oldest first")
    answered_from: list[str] = Field(description="every version this process has answered from, in order")
    open: list[str] = Field(
        description="versions with an engine open now (older ones close after their last answer)"
    )


class Health(BaseModel):
    status: Literal["ok", "not ready"]
    version: str | None = None
    reader: str | None = None


BatchItem.model_rebuild()
