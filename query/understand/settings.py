"""How the engine reads a question (``[understand]`` in an engine config): the intent extractor and the
entity linker, each default written once, here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class IntentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extractor: str = Field(
        "rules", description="intent extractor by name (``query.understand.understanding.INTENT_EXTRACTORS``)"
    )
    max_ngram: int = Field(6, ge=1, description="longest word n-gram looked up in the alias index")
    max_properties: int = Field(5, ge=0, description="properties kept for the relation phrase")


class LinkingSettings(BaseModel):
    """The linker's score mixes alias match and prior, popularity and question context
    (``query.understand.linking``)."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(5, ge=1, description="candidate entities kept per mention")
    alias_weight: float = Field(0.6, ge=0.0)
    popularity_weight: float = Field(0.2, ge=0.0)
    context_weight: float = Field(0.2, ge=0.0)
    fuzzy: bool = Field(True, description="also fuzzy alias matches (after exact and normalized ones)")
    pool: int = Field(20, ge=1, description="alias hits ranked per mention before the top k are kept")

    @model_validator(mode="after")
    def _some_weight(self) -> LinkingSettings:
        if self.alias_weight + self.popularity_weight + self.context_weight <= 0:
            raise ValueError("linker weights must be non-negative with a positive sum")
        return self


class UnderstandSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    intent: IntentSettings = Field(default_factory=IntentSettings)
    linking: LinkingSettings = Field(default_factory=LinkingSettings)
