"""Stream the members of one huge top-level JSON object without loading it whole.

Some releases (OTT-QA's passages: 180k members, ~120 MB) are a single ``{"key": value, …}``
document. This reader decodes one member at a time from a sliding text buffer, so memory holds
one member plus one read-ahead chunk; it reports the character offset of every member.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

READ_CHARS = 1 << 20
MAX_MEMBER_CHARS = 64 << 20
_WHITESPACE = " \t\r\n"


class JsonStreamError(ValueError):
    """The document is not a JSON object, or breaks off, at ``offset`` (characters)."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} at character {offset}")
        self.offset = offset


@dataclass
class Member:
    key: str
    value: Any
    offset: int  # character offset of the member's key in the document


class ObjectMembers:
    """Iterate ``Member``s of the top-level object in ``text``; raises ``JsonStreamError`` on bad input."""

    def __init__(self, text: TextIO, *, max_member_chars: int = MAX_MEMBER_CHARS):
        self._text = text
        self._max_member_chars = max_member_chars
        self._buffer = ""
        self._pos = 0  # position in buffer
        self._base = 0  # document offset of buffer[0]
        self._eof = False
        self._decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self._eof:
            return False
        data = self._text.read(READ_CHARS)
        if not data:
            self._eof = True
            return False
        if self._pos > READ_CHARS:
            self._base += self._pos
            self._buffer = self._buffer[self._pos :]
            self._pos = 0
        self._buffer += data
        return True

    def _skip_ws(self) -> str:
        """Advance past whitespace; the next character, or '' at the end of the document."""
        while True:
            while self._pos < len(self._buffer) and self._buffer[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(self._buffer):
                return self._buffer[self._pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        char = self._skip_ws()
        if char == "" or char not in chars:
            found = "the end of the input" if char == "" else repr(char)
            raise JsonStreamError(f"expected {what}, found {found}", self._base + self._pos)
        self._pos += 1
        return char

    def _decode(self) -> Any:
        self._skip_ws()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._pos)
            except json.JSONDecodeError as exc:
                # Maybe the value just continues in the next chunk; a value that never ends is bad input.
                if len(self._buffer) - self._pos < self._max_member_chars and self._fill():
                    continue
                raise JsonStreamError(f"bad JSON value ({exc.msg})", self._base + exc.pos) from None
            # A number could continue in the unread part: make sure a delimiter follows.
            if end == len(self._buffer) and self._fill():
                continue
            self._pos = end
            return value

    def __iter__(self) -> Iterator[Member]:
        self._expect("{", "'{' opening the document")
        if self._skip_ws() == "}":
            return
        while True:
            offset = self._base + self._pos
            key = self._decode()
            if not isinstance(key, str):
                raise JsonStreamError("expected a string key", offset)
            self._expect(":", "':' after a key")
            yield Member(key, self._decode(), offset)
            if self._expect(",}", "',' or '}' after a value") == "}":
                return
