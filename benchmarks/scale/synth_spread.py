"""How big each synthetic item and article is: a real dump's spread, not the sample's.

The sample's 100 items are mostly countries and cities (5 to 654 statements, median 63) and its
articles are long (median 3,251 words, lead 192). A real dump is mostly small records:

- **Items.** Wikidata held 1.57 billion statements in mid-2024 (en.wikipedia.org/wiki/Wikidata) over
  ~110 million items (it passed 100 million in October 2022: blog.wikimedia.de/2022/10/25), a mean of
  ~14; in 2014 half of all items had two statements or fewer (ultimategerardm.blogspot.com, September
  2014). No published median for today was found: the log-normal below (median 5, sigma 1.0) is an
  **assumption**, chosen at the low end of the brief's 5-10 so the largest corpus builds within the
  hour here, with a long tail: draws are capped at the template item's own count, and 1 % of items are
  whole copies of a sample item (labels in every language, every statement, up to 654). The mean this
  gives (~8 statements, measured by ``synth.py`` into its manifest) is below Wikidata's 14.
- **Articles.** English Wikipedia had 6,816,939 articles and 4.5 billion words in April 2024, ~668
  words an article (en.wikipedia.org/wiki/Wikipedia:Size_of_Wikipedia). A small article here is the
  lead (where the infobox is) plus the next ``k`` top-level sections, ``k`` geometric with mean 0.7,
  and 3 % are whole copies: on the sample's words that is ~600-700 words an article (an
  **assumption** calibrated to that mean, not a measured distribution). Redirects are copied whole.
"""

from __future__ import annotations

import math
import random

from pydantic import BaseModel, Field


class SizeSpread(BaseModel):
    """The size distributions of one corpus; part of its identity (the cache key) with the seed."""

    median_statements: float = Field(5.0, gt=0, description="median statements of a small item")
    sigma_statements: float = Field(1.0, ge=0, description="log-normal sigma of a small item's statements")
    full_item_share: float = Field(0.01, ge=0, le=1, description="share of items copied whole")
    mean_extra_sections: float = Field(0.7, ge=0, description="mean top-level sections after the lead")
    full_page_share: float = Field(0.03, ge=0, le=1, description="share of articles copied whole")

    def item_size(self, rng: random.Random, available: int) -> tuple[bool, int]:
        """(whole copy?, statements to keep) for an item whose template has ``available`` statements."""
        if rng.random() < self.full_item_share:
            return True, available
        drawn = round(rng.lognormvariate(math.log(self.median_statements), self.sigma_statements))
        return False, max(1, min(available, drawn))

    def article_sections(self, rng: random.Random, available: int) -> int:
        """Top-level sections kept after the lead of an article with ``available`` of them."""
        if rng.random() < self.full_page_share:
            return available
        keep = 1 / (1 + self.mean_extra_sections)  # geometric on 0, 1, 2, … with the wanted mean
        sections = 0
        while sections < available and rng.random() >= keep:
            sections += 1
        return sections
