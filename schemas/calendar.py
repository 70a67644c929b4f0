"""English month names, defined once for every layer that writes or reads a date.

Ingest writes dates into text ("March 12, 1990"), the index verbalizes Wikidata times ("14 March
1879"), and the query engine reads them back out of questions, table cells and evidence. A month
written one way by one layer must be read by the others, so the names live here, in the layer every
other one may import.
"""

from __future__ import annotations

MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
"""Capitalised, in calendar order: ``MONTH_NAMES[month - 1]`` writes month number ``month``."""

MONTH_NUMBERS: dict[str, int] = {
    **{name.lower(): number for number, name in enumerate(MONTH_NAMES, start=1)},
    **{name[:3].lower(): number for number, name in enumerate(MONTH_NAMES, start=1)},
    "sept": 9,
}
"""Month number (1-12) by lower-case name as people write it: full ("september"), three letters
("sep") or "sept". Callers lower-case and strip a trailing period before looking up."""
