"""The entity ids and page titles each batch of an ingest file mentions, as SQL over the file.

A record's names are looked up once per file, not once per batch (``index.names.BatchNames``): these
queries list, for every batch ``part`` (``row // batch_rows``), the distinct ids and titles its
records name, so one join against the build's name tables serves every batch of the file.

Ids are what ``Lexicon.name``/``unit_name``/``property_name`` are asked about; titles what
``resolve_title``/``entity_for_title`` and ``page_title_for`` (an entity keyed by its article's
title) are asked about.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeySql:
    """Two queries over the view ``rows`` (the file, with ``part``): (part, key) of ids and of titles."""

    ids: str | None
    titles: str | None


_STATEMENT_IDS = """
SELECT part, unnest([subject, property, value_item, value_unit]) AS key FROM rows
UNION ALL
SELECT part, unnest([q.property, q.value_item, q.value_unit]) AS key
FROM (SELECT part, unnest(qualifiers) AS q FROM rows)
"""


def _page_titles(links: str) -> str:
    """The page title and every link target of the records; ``links`` selects (part, l) link structs."""
    return f"SELECT part, page_title AS key FROM rows UNION ALL SELECT part, l.target AS key FROM ({links})"


KEYS: dict[str, KeySql] = {
    "statements": KeySql(ids=_STATEMENT_IDS, titles="SELECT part, subject AS key FROM rows"),
    "entities": KeySql(ids="SELECT part, id AS key FROM rows", titles="SELECT part, id AS key FROM rows"),
    "passages": KeySql(ids=None, titles=_page_titles("SELECT part, unnest(links) AS l FROM rows")),
    "infobox_fields": KeySql(
        ids=None, titles=_page_titles("SELECT part, unnest(value_links) AS l FROM rows")
    ),
    "table_rows": KeySql(
        ids=None,
        titles=_page_titles(
            "SELECT part, unnest(c.links) AS l FROM (SELECT part, unnest(cells) AS c FROM rows)"
        ),
    ),
}
