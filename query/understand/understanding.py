"""What the engine reads from a question once, before any mode runs: its intent and its linked entities.

Every mode and the retrieve → read pipeline start from the same ``Understanding``, so no mode re-links
and the route a user sees explains one reading of the question.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from index.aliases import AliasIndex
from query.registry import Registry
from query.timing import timed
from query.understand.intent import EntityDescriptions, IntentExtractor, RuleIntentExtractor
from query.understand.linking import EntityLinker
from query.understand.properties import PropertyLabels
from query.understand.settings import IntentSettings
from schemas.answers import question_text
from schemas.query import Intent, LinkedMention


@dataclass
class Understanding:
    """The question as the engine read it before any mode ran; its timings go into every result."""

    question: str
    intent: Intent
    links: list[LinkedMention]
    timings: dict[str, float] = field(default_factory=dict)


class Understander:
    """Intent, then linked entities. Holds no mutable state, so threads may share it."""

    def __init__(self, extractor: IntentExtractor, linker: EntityLinker, link_k: int):
        self.extractor, self.linker, self.link_k = extractor, linker, link_k

    def run(self, question: str) -> Understanding:
        """An empty question, or one that is not Unicode, is refused with a ``ValueError``
        (``schemas.answers.question_text``) before any index is read."""
        question_text(question)
        timings: dict[str, float] = {}
        with timed(timings, "intent"):
            intent = self.extractor.run(question)
        with timed(timings, "linking"):
            links = self.linker.run(question, intent.mentions, k=self.link_k)
        return Understanding(question, intent, links, timings)


@dataclass(frozen=True)
class IntentContext:
    """What an intent extractor may be built from: the alias index, the property labels, the entity
    descriptions and its settings."""

    aliases: AliasIndex
    properties: PropertyLabels
    entities: EntityDescriptions | None
    settings: IntentSettings


INTENT_EXTRACTORS: Registry[IntentContext, IntentExtractor] = Registry(
    "intent extractor",
    {"rules": lambda c: RuleIntentExtractor(c.aliases, c.properties, c.settings, entities=c.entities)},
)
"""Intent extractors by the name ``[understand.intent] extractor`` gives; an LLM extractor registers here."""
