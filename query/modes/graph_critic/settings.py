"""Bounds of the graph-critic mode (``[graph_critic]`` in an engine config), and its words: the modules,
the critic's feedback types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

NAME = "graph-critic"
Module = Literal["hybrid", "text", "fused", "deeper"]
FEEDBACK = (
    "no entity",
    "incorrect entity",
    "incorrect relation",
    "missing entity",
    "no intersection",
    "answer outside intersection",
    "wrong module",
)


class GraphCriticSettings(BaseModel):
    """Bounds of the graph-critic mode (``[graph_critic]`` in an engine config)."""

    rounds: int = Field(3, ge=1, le=6, description="router-critic rounds at most")
    topics: int = Field(2, ge=1, le=4, description="topic entities walked at once")
    edges_per_hop: int = Field(200, ge=1, description="edges read per kind per hop; more is cut, and said")
    page_rows: int = Field(400, ge=1, description="rows read from the topic entities' pages")
    leads_per_target: int = Field(2, ge=1, description="lead windows read per reached page")
    evidence: int = Field(30, ge=1, le=100, description="rows a module hands the reader")
    accept_confidence: float = Field(0.5, ge=0, le=1, description="the rule validator's confidence floor")
    validator: Literal["rules", "llm", "answer"] = Field(
        "rules",
        description="'llm': the instruct model judges whether the round's top rows state the answer "
        "(query.modes.graph_critic.llm_validator) in place of the confidence floor; 'answer': beside the "
        "confidence floor, the model checks the round's answer against the rows it was read from; the rules "
        "when no model loaded",
    )
    accept_probability: float = Field(
        0.5,
        ge=0,
        le=1,
        description="the LLM validator's floor on P(the rows state the answer) or, for "
        "'answer', on P(the answer is what the question asks)",
    )
    validator_rows: int = Field(3, ge=1, le=10, description="top rows the LLM validator reads")
    word_weight: float = Field(0.3, ge=0, description="weight of the question-word share beside dense cosine")
    estimate: float = Field(
        0.55, ge=0, le=1, description="router order when a topic entity is linked (retrieve-read: 0.5)"
    )
    first_module: Literal["router", "fused"] = Field(
        "router",
        description="'router': the first round walks the graph when an entity is linked (the published "
        "design); 'fused': it reads the single pass first and walks the graph when the critic rejects it "
        "(on OTT-QA the hybrid module alone ranks far below the single pass: see benchmarks/results/)",
    )
    deeper: bool = Field(
        True,
        description="after a rejected single pass, read the rows of its ranking the LLM reader was not "
        "shown (the 'deeper' module) before walking the graph",
    )
    cited_first: bool = Field(
        True,
        description="the rows the reader read the answer from lead the round's evidence, ahead of the "
        "module's order: they are what the critic judged",
    )
