"""What the query engine hands across its boundaries: the intent of a question, linked entities, scored
evidence and the result a user (or a batch job, or the evaluation harness) receives.

Every stage of the engine reads and writes these models, so a stage can be replaced (a rule-based intent
extractor by an LLM one, a feature ranker by a cross-encoder) without its neighbours noticing.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from schemas.answers import QuestionText, StageTiming
from schemas.evidence import Provenance, SourceType

AnswerType = Literal["person", "place", "organization", "date", "year", "number", "entity", "other"]
"""What kind of thing answers the question; ``entity`` when it is a thing but of no narrower type."""

TimeCue = Literal["first", "last", "before", "after", "during", "since", "until"]


class Mention(BaseModel):
    """A span of the question that may name an entity; offsets are character positions in the question."""

    text: str
    start: int
    end: int


class TimeConstraint(BaseModel):
    years: list[int] = Field(default_factory=list, description="four-digit years in the question")
    dates: list[str] = Field(default_factory=list, description="full dates as ISO 'YYYY-MM-DD'")
    cues: list[TimeCue] = Field(default_factory=list, description="ordinal / relative cues, in order")

    def is_empty(self) -> bool:
        return not (self.years or self.dates or self.cues)


class PropertyMatch(BaseModel):
    """A Wikidata property the relation phrase may express, with how well its label or an alias matched."""

    property: str = Field(description="Wikidata property id, e.g. P1082")
    label: str
    matched: str = Field(description="the label or alias that matched")
    score: float = Field(ge=0.0, le=1.0)


class Intent(BaseModel):
    """The structured reading of a question: what is asked, about whom, along which relation, when, where.

    Built first from every question, so its ``question`` check (``schemas.answers.question_text``) is where
    the engine refuses an empty question or one that is not Unicode, before any retrieval runs."""

    question: QuestionText
    answer_type: AnswerType
    answer_type_phrase: str | None = Field(None, description="the noun naming the type: 'which *city*'")
    mentions: list[Mention] = Field(default_factory=list)
    relation: str | None = Field(None, description="the relation phrase: 'population', 'directed by'")
    properties: list[PropertyMatch] = Field(default_factory=list, description="best first")
    time: TimeConstraint = Field(default_factory=TimeConstraint)
    location: str | None = Field(None, description="a place the question is restricted to")
    keywords: list[str] = Field(default_factory=list, description="content words, for the lexical query")
    extractor: str = Field(description="which extractor produced this intent")


class EntityCandidate(BaseModel):
    entity_id: str
    label: str
    description: str | None = None
    page_title: str | None = None
    match: str = Field(description="how the alias matched: exact, normalized or fuzzy")
    prior: float = Field(description="P(entity | alias) from anchors, labels and titles")
    popularity: float
    context: float = Field(description="overlap of the question with the entity's label and description")
    score: float


class LinkedMention(BaseModel):
    """One mention with its candidate entities, best first: a ranked list, never a single forced guess."""

    mention: Mention
    candidates: list[EntityCandidate]

    @property
    def best(self) -> EntityCandidate | None:
        return self.candidates[0] if self.candidates else None


class ScoredEvidence(BaseModel):
    """A piece of evidence in the pool, with every signal that scored it and its rank after each stage."""

    evidence_id: str
    source_type: SourceType
    text: str
    title: str
    page_title: str | None = None
    entity_ids: list[str] = Field(default_factory=list)
    provenance: Provenance
    score: float = Field(description="score of the last stage that ranked it")
    signals: dict[str, float] = Field(default_factory=dict, description="per-signal scores: bm25, dense, …")
    ranks: dict[str, int] = Field(default_factory=dict, description="1-based rank after each stage")
    retrieved_by: list[str] = Field(default_factory=list, description="retrievers that found it")


class AnswerCandidate(BaseModel):
    text: str
    entity_id: str | None = None
    kind: Literal["entity", "date", "year", "number", "name"]
    support: float = Field(description="score mass of the evidence that contains it")
    type_match: float
    score: float
    evidence_ids: list[str] = Field(default_factory=list)


ReadOutcome = Literal[
    "supported",
    "normalized",
    "retried",
    "below-threshold",
    "unknown",
    "unsupported",
    "candidates",
    "error",
    "unavailable",
]


class LlmReading(BaseModel):
    """How the LLM reader reached its answer (or why it gave none), and what the reading cost.

    outcome: ``supported`` the answer is a span of a shown row; ``normalized`` a value of one written
    otherwise; ``retried`` supported on the one retry; ``below-threshold`` supported but less sure than
    the configured minimum (answered "unknown"); ``unknown`` the model found no answer; ``unsupported``
    no row held the answer, even after the retry; ``candidates`` the candidate reader's answer was
    returned instead; ``error`` the model failed mid-question, ``unavailable`` it could not be loaded
    (the candidate reader answered in both).
    """

    model: str
    outcome: ReadOutcome
    raw_answer: str | None = Field(None, description="the model's answer before the support check")
    cited: list[int] = Field(default_factory=list, description="evidence numbers the model cited (1-based)")
    shown: int = Field(0, ge=0, description="evidence rows in the prompt (both windows when read further)")
    further_from: int | None = Field(
        None,
        ge=1,
        description="the first evidence number of a second window, read when the top rows gave no sure "
        "answer; the outcome and cited numbers are the second window's when its answer won, else the "
        "first's; the cost is both windows'",
    )
    unit: str | None = Field(None, description="a unit split off a quantity answer")
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    ms: float = Field(0.0, ge=0)
    calls: int = Field(0, ge=0, description="model requests made (a retry or a schema repair adds one)")
    answer_logprob: float | None = Field(None, description="mean log-probability of the answer's tokens")
    error: str | None = None


class RouteStep(BaseModel):
    """What one reasoning mode did with a question: answered, declined (and why), or was not tried."""

    mode: str
    outcome: Literal["answered", "declined", "not tried"]
    reason: str = Field(description="why the router tried it in this place, and why it answered or declined")
    estimate: float = Field(
        0.0, description="the mode's own estimate that it can answer, which set the order"
    )
    ms: float = 0.0


class KgFact(BaseModel):
    """The Wikidata statement a KG lookup answered from, as a user checks it: who, what, value, when."""

    statement_id: str
    subject: str
    subject_label: str | None = None
    property: str
    property_label: str | None = None
    rank: Literal["preferred", "normal", "deprecated"]
    value: str = Field(description="the value as written, unit included")
    value_item: str | None = Field(None, description="Wikidata id when the value is an item")
    qualifiers: str | None = Field(None, description="'point in time: 2014, determination method: census'")
    evidence_id: str | None = Field(None, description="the evidence row that says the same, for provenance")


class TableColumn(BaseModel):
    name: str = Field(description="the SQL identifier")
    header: str = Field(description="the header as the source wrote it")
    type: Literal["number", "date", "text"]


class TableCellValue(BaseModel):
    text: str = Field(description="the cell as the source wrote it")
    links: list[str] = Field(default_factory=list, description="pages the cell links to")
    provenance: str | None = Field(None, description="where a graph cell's value came from: its statement")


class TableRowView(BaseModel):
    """One row of the question's table, with where it came from."""

    row_index: int
    cells: list[TableCellValue] = Field(description="one per column, in the columns' order")
    evidence_id: str | None = Field(None, description="the evidence row that says this table row")


class StatisticalTest(BaseModel):
    """A test a statistics question was answered by, with what it found (``query.sql.stats``)."""

    name: str = Field(description="'Shapiro-Wilk', 'Pearson correlation', 'Levene (median)'")
    statistic: float = Field(description="W, r or the Levene statistic")
    p_value: float
    n: list[int] = Field(description="values in each sample tested")
    alpha: float = Field(description="the significance level the verdict is read at")
    verdict: str = Field(description="what the p-value says, in words")


class TableSql(BaseModel):
    """The table a table-sql answer was computed over, the SQL that ran, and the rows it picked."""

    source: str = Field(description="where the rows came from: 'wikipedia table <table id>' or 'graph'")
    set_query: str | None = Field(
        None, description="the Cypher (or 'explicit list') that made the entity set"
    )
    set_params: dict[str, Any] = Field(default_factory=dict, description="the parameters it ran with")
    title: str
    columns: list[TableColumn]
    rows: list[TableRowView] = Field(description="the table's rows (up to a display cap)")
    total_rows: int
    operation: str = Field(description="what the question asked: 'superlative: most top 4 finishes'")
    sql: str
    params: list[Any] = Field(default_factory=list)
    selected: list[int] = Field(default_factory=list, description="row_index of the rows the SQL returned")
    value: str | None = Field(None, description="the ranked value or the count the SQL returned")
    note: str | None = Field(None, description="a tie, a cap or another reason to trust the answer less")
    test: StatisticalTest | None = Field(None, description="the test a statistics question ran, if any")


PlanOperation = Literal["lookup", "compare", "count", "superlative", "filter", "aggregate", "yes_no"]
PlanAnswerKind = Literal["entity", "number", "date", "text", "boolean"]
Comparator = Literal[">", "<", ">=", "<="]


class PlanSet(BaseModel):
    """The set an operation ranges over: entities the question names, a class within a place, or the items
    one relation of a named entity lists."""

    entities: list[str] = Field(default_factory=list, description="mentions as the question writes them")
    class_phrase: str | None = Field(None, description="the class noun: 'city', 'commune', 'country'")
    place: str | None = Field(None, description="the place as written: 'Germany', 'French', 'Asian'")
    owner: str | None = Field(
        None, description="the named entity whose related items form the set: 'Belgium' (its neighbours)"
    )
    relation: str | None = Field(None, description="the relation that lists them, as written: 'neighbours'")
    described: list[str] = Field(
        default_factory=list, description="names that pick one of them: 'Norway' ('the twin city in Norway')"
    )


class PlanConstraints(BaseModel):
    """What an answer must meet: a year or interval, a threshold, an ordinal, a direction."""

    years: list[int] = Field(default_factory=list, description="a year asked ('in 1995')")
    interval: tuple[int, int] | None = Field(None, description="an interval of years, both ends included")
    comparator: Comparator | None = None
    threshold: float | None = Field(None, description="the number a value is compared with")
    threshold_unit: str | None = Field(
        None, description="the threshold's unit as written: 'square kilometres'"
    )
    pick: Literal["max", "min"] | None = Field(
        None, description="which end a comparison or superlative wants"
    )
    ordinal: int = Field(1, ge=1, description="1 = the top, 2 = the second, …")
    value: str | None = Field(None, description="yes/no membership: the value asked about ('Norway')")


class QuestionPlan(BaseModel):
    """A question read into what to do (issue 35, after QUASAR's structured intent): which entities, which
    relations in order (a chain's first hop first), which operation over which set, under which
    constraints, answered by which kind of thing. The plan holds words; the code maps them to ids
    (``resolved``) and says how in ``notes``, so a plan from a model never smuggles an id in."""

    mentions: list[str] = Field(default_factory=list, description="entity names as the question writes them")
    relations: list[str] = Field(
        default_factory=list, description="relation phrases, first hop first: ['capital', 'population']"
    )
    operation: PlanOperation = "lookup"
    set: PlanSet | None = None
    constraints: PlanConstraints = Field(default_factory=PlanConstraints)
    answer_kind: PlanAnswerKind = "text"
    source: Literal["rules", "llm"] = "rules"
    confidence: float = Field(0.0, ge=0.0, le=1.0, description="how sure the planner is of its reading")
    unexplained: list[str] = Field(default_factory=list, description="content words the plan leaves unread")
    resolved: dict[str, str] = Field(
        default_factory=dict,
        description="what the code mapped each mention, relation, place and class to: 'population' → 'P1082'",
    )
    notes: list[str] = Field(default_factory=list, description="how the plan was read and mapped, in words")
    outcome: str | None = Field(None, description="what executing the plan found, or why it refrained")


class RefinementRound(BaseModel):
    """One round of the graph-critic mode: what the router chose, what it found, what the critic said."""

    round: int
    module: Literal["hybrid", "text", "fused", "deeper"]
    entities: list[str] = Field(default_factory=list, description="topic entities, 'id (label)'")
    relations: list[str] = Field(default_factory=list, description="relations walked; empty = any")
    paths: list[str] = Field(default_factory=list, description="reasoning paths 'A -rel-> B', best first")
    top: list[str] = Field(default_factory=list, description="the module's top evidence ids, best first")
    answer: str
    confidence: float
    accepted: bool = Field(description="the validator's verdict on this round's top result")
    feedback: str | None = Field(None, description="the commenter's feedback type, when rejected")
    detail: str | None = Field(None, description="what the feedback is about, in words")
    note: str | None = Field(None, description="a cap or a fallback the round met")
    ms: float = 0.0


class QueryResult(BaseModel):
    """The answer, how sure the engine is, what supports it, and how it got there."""

    question: QuestionText
    answer: str = Field(description="the answer text, or 'unknown' when the evidence does not hold one")
    answer_entity_id: str | None = None
    unknown: bool
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[ScoredEvidence] = Field(description="top evidence after the last stage, best first")
    supporting_evidence_ids: list[str] = Field(default_factory=list, description="evidence with the answer")
    candidates: list[AnswerCandidate] = Field(default_factory=list, description="best first")
    intent: Intent
    links: list[LinkedMention] = Field(default_factory=list)
    timings: list[StageTiming] = Field(default_factory=list)
    reader: str = Field(description="what chose the answer: 'candidates' or an LLM backend's name")
    index_version: str
    unit: str | None = Field(
        None, description="the unit of a quantity answer, kept apart: 'square kilometre'"
    )
    mode: str = Field("retrieve-read", description="the reasoning mode that answered")
    route: list[RouteStep] = Field(default_factory=list, description="every mode in the router's order")
    facts: list[KgFact] = Field(default_factory=list, description="statements a KG lookup answered from")
    reading: LlmReading | None = Field(None, description="the LLM reader's account, when it read")
    table: TableSql | None = Field(None, description="the table and SQL, when the table-sql mode answered")
    refinement: list[RefinementRound] = Field(
        default_factory=list, description="the graph-critic mode's rounds, in order, when it answered"
    )
    validated: bool | None = Field(None, description="graph-critic: whether the critic accepted the answer")
    plan: QuestionPlan | None = Field(None, description="the question plan a plan-executing mode followed")

    def timing(self, stage: str) -> float | None:
        return next((t.ms for t in self.timings if t.stage == stage), None)
