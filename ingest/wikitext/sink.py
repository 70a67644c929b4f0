"""The buffer rendered text goes into, remembering where each wikilink's anchor starts.

Passages are split into paragraphs only after a whole section is rendered, so links carry their
character position in the buffer to be assigned to the paragraph that holds them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class PendingLink:
    """A wikilink seen while rendering; ``anchor`` is raw rendered text, cleaned when emitted."""

    position: int
    target: str
    fragment: str | None
    anchor: str


class Sink:
    """Append-only text buffer with the links written into it."""

    __slots__ = ("links", "parts", "size")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.links: list[PendingLink] = []

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        return "".join(self.parts)

    def since(self, part_index: int) -> str:
        """Text written since ``len(self.parts)`` was ``part_index``."""
        return "".join(self.parts[part_index:])
