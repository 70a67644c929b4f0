"""Stage 1 of the query engine: the structured intent of a question (after QUASAR).

What kind of thing answers it (the wh-phrase, ``answer_type``), which spans name entities (quoted
text, capitalized spans, n-grams the alias index knows: ``mentions``), the relation phrase and the
Wikidata properties it may express, time constraints (years, dates, cues such as "first" or
"before": ``temporal``) and a place it is restricted to. ``RuleIntentExtractor`` assembles these with
rules and the alias index alone: no model, no training data, a few milliseconds per question. An LLM
extractor can replace it behind ``IntentExtractor`` without the later stages noticing.
"""

from __future__ import annotations

from typing import Protocol

from index.aliases import AliasIndex
from query.lexicon import WH_WORDS
from query.understand import temporal
from query.understand.answer_type import wh_phrase
from query.understand.mentions import EntityDescriptions, MentionFinder
from query.understand.properties import PropertyLabels
from query.understand.settings import IntentSettings
from query.understand.tokens import content_words, tokenize
from schemas.query import Intent, TimeConstraint


class IntentExtractor(Protocol):
    """Reads a question into an ``Intent``; implementations must be safe for concurrent ``run`` calls."""

    name: str

    def run(self, question: str) -> Intent: ...


class RuleIntentExtractor:
    """Rules over tokens plus exact alias look-ups; holds no mutable state, so threads may share it."""

    name = "rules"

    def __init__(
        self,
        aliases: AliasIndex,
        properties: PropertyLabels,
        settings: IntentSettings | None = None,
        *,
        entities: EntityDescriptions | None = None,
    ):
        self.aliases = aliases
        self.properties = properties
        self.entities = entities
        self.settings = settings or IntentSettings()
        self.max_ngram = self.settings.max_ngram
        self.max_properties = self.settings.max_properties
        self.mentions = MentionFinder(aliases, entities, self.max_ngram)

    def to_dict(self) -> dict:
        return {"name": self.name, "max_ngram": self.max_ngram, "max_properties": self.max_properties}

    def run(self, question: str) -> Intent:
        """The parts in the order they need each other: time and the wh-phrase block tokens from the
        mentions; mentions, years and cues are what the relation phrase is not."""
        tokens = tokenize(question)
        dates, date_spans = temporal.dates(question)
        time_tokens = temporal.time_tokens(question, tokens, date_spans)
        wh = wh_phrase(tokens)
        spans = self.mentions.spans(question, tokens, wh.tokens | wh.type_tokens | time_tokens)
        in_mention = {i for s in spans for i in range(s.first, s.last + 1)}
        years, year_tokens = temporal.years(question, tokens, date_spans)
        years = list(dict.fromkeys([*years, *(int(d[:4]) for d in dates)]))
        cues, cue_tokens = temporal.cues(tokens, in_mention)
        skip = wh.tokens | in_mention | time_tokens | year_tokens | cue_tokens
        relation_words = [
            w for i, t in enumerate(tokens) if i not in skip for w in content_words(t.text) if not w.isdigit()
        ]
        relation = " ".join(relation_words) or None
        properties = (
            self.properties.match(relation, self.max_properties, answer_type=wh.answer_type)
            if relation and self.max_properties
            else []
        )
        keywords = list(
            dict.fromkeys(w for t in tokens if t.lower not in WH_WORDS for w in content_words(t.text))
        )
        return Intent(
            question=question,
            answer_type=wh.answer_type,
            answer_type_phrase=wh.phrase,
            mentions=[self.mentions.mention(question, tokens, s) for s in spans],
            relation=relation,
            properties=properties,
            time=TimeConstraint(years=years, dates=dates, cues=cues),
            location=self.mentions.location(question, tokens, spans),
            keywords=keywords,
            extractor=self.name,
        )
