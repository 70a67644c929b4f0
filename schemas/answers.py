"""What goes into and comes out of question answering: one question in, one answer record out.

Every answerer (BM25 alone today, the query engine later) returns the same ``AnswerRecord``, so a
batch file, the API and the benchmarks read one shape whatever produced it. The record keeps the
evidence and timings beside the answer: an answer is only worth as much as what supports it, and
a slow stage must be visible per question, not only on average.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from schemas.arrow import arrow_schema


def question_text(text: str) -> str:
    """``text`` if it can be a question, else a ``ValueError`` saying why.

    A question is data: any script, any punctuation, query syntax of any engine, control characters, any
    length are all just text the engine reads. Two things are not a question: text with nothing but
    whitespace (nothing is asked; a batch file rejects such a line the same way), and text that is not
    Unicode at all: a lone surrogate, which is what Python makes of undecodable bytes (``sys.argv`` under
    ``surrogateescape``) and what a JSON ``"\\ud800"`` escape decodes to. No tokenizer, index or output
    file can take it (the embedder's tokenizer raised deep inside retrieval; JSON and Parquet writers
    cannot encode it), so it is refused at the door with its position.
    """
    if not text.strip():
        raise ValueError("the question is empty or only whitespace: ask something")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"the question is not valid Unicode text: {text[exc.start]!r} at character {exc.start} is a "
            "lone surrogate (bytes that are not UTF-8?); pass the question as UTF-8"
        ) from None
    return text


QuestionText = Annotated[str, AfterValidator(question_text)]
"""A question's text as every model that carries one holds it: see ``question_text``."""


class Question(BaseModel):
    """A question as a user or a benchmark asks it; ``id`` ties its answer back to the input."""

    id: str = Field(min_length=1)
    question: QuestionText


class StageTiming(BaseModel):
    """Time one stage spent on one question (a list, not a dict: Arrow stores it as list<struct>)."""

    stage: str = Field(description="e.g. bm25, vectors, rerank, generate")
    ms: float


class RouteRecord(BaseModel):
    """What one reasoning mode did with the question (``schemas.query.RouteStep`` as Arrow stores it)."""

    mode: str = Field(description="e.g. kg-lookup, retrieve-read")
    outcome: Literal["answered", "declined", "not tried"]
    reason: str = Field(description="why the router tried it there, and why it answered or declined")
    ms: float = 0.0


class AnswerRecord(BaseModel):
    """The outcome for one question: the answer (or None), its evidence, timings, and what made it.

    ``answer`` None with ``error`` None means "no answer found" (unknown); ``error`` set means the
    question could not be answered at all (malformed input line, an exception), so a bad input or
    a failing question shows up as a row instead of disappearing from the output.
    """

    question_id: str
    question: str
    answer: str | None = Field(None, description="None = unknown or not answered")
    answer_entity_id: str | None = Field(None, description="Wikidata id when the answer is an entity")
    unit: str | None = Field(None, description="the unit of a quantity answer: 'square kilometre'")
    confidence: float | None = Field(None, description="the answerer's own score in [0, 1], if it has one")
    evidence_ids: list[str] = Field(default_factory=list, description="best first")
    evidence_scores: list[float] = Field(default_factory=list, description="same order as evidence_ids")
    evidence_source_types: list[str] = Field(default_factory=list, description="kg, text, table, infobox")
    timings: list[StageTiming] = Field(default_factory=list)
    mode: str | None = Field(
        None, description="the reasoning mode whose result this is (also when unknown); None = no modes"
    )
    route: list[RouteRecord] = Field(default_factory=list, description="every mode in the router's order")
    sql: str | None = Field(None, description="the SQL the table-sql mode ran, when it answered")
    table: str | None = Field(
        None, description="the table-sql mode's table, SQL and chosen rows (schemas.query.TableSql as JSON)"
    )
    refinement: str | None = Field(
        None, description="the graph-critic mode's rounds (a JSON list of schemas.query.RefinementRound)"
    )
    validated: bool | None = Field(None, description="graph-critic: whether its critic accepted the answer")
    reading: str | None = Field(
        None,
        description="the LLM reader's account (schemas.query.LlmReading as JSON): its outcome — 'error' when "
        "the server failed and the candidate reader answered instead — the error, tokens, ms; None = it "
        "did not read",
    )
    index_version: str = Field(description="the index version every evidence id belongs to")
    answerer: str = Field(description="what answered: bm25, engine, …")
    error: str | None = Field(None, description="why the question could not be answered")


ANSWER_RECORD_SCHEMA = arrow_schema(AnswerRecord)
