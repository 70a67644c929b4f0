"""Every parser boundary the fuzzer feeds, by name: a boundary has seeds from the real samples, a generator
of mutated inputs, and a runner that checks a batch of them (``tests.fuzz.harness.Boundary``)."""

from __future__ import annotations

from tests.fuzz.boundaries.config import ConfigBoundary
from tests.fuzz.boundaries.ottqa import OttqaBoundary
from tests.fuzz.boundaries.questions import QuestionsBoundary
from tests.fuzz.boundaries.wikidata import WikidataBoundary
from tests.fuzz.boundaries.wikipedia import WikitextBoundary, XmlBoundary
from tests.fuzz.harness import Boundary

BOUNDARIES: dict[str, type[Boundary]] = {
    b.name: b
    for b in (
        WikidataBoundary,
        WikitextBoundary,
        XmlBoundary,
        OttqaBoundary,
        QuestionsBoundary,
        ConfigBoundary,
    )
}
