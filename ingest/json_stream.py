"""Stream the members of one huge top-level JSON object without loading it whole.

Some releases (OTT-QA's passages: 180k members, ~120 MB) are a single ``{"key": value, …}``
document. This reader decodes one member at a time from a sliding text buffer, so memory holds
one member plus one read-ahead chunk; it reports the character offset of every member. Keys,
values and separators are matched by the C scanner of ``json`` and compiled regexes, so the
Python work per member is a handful of calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Any, TextIO

READ_CHARS = 1 << 20
MAX_MEMBER_CHARS = 64 << 20
_OPEN = re.compile(r"[ \t\n\r]*\{[ \t\n\r]*")
_KEY_START = re.compile(r'[ \t\n\r]*"')
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_AFTER_VALUE = re.compile(r"[ \t\n\r]*([,}])")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class JsonStreamError(ValueError):
    """The document is not a JSON object, or breaks off, at ``offset`` (characters)."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} at character {offset}")
        self.offset = offset


@dataclass
class Member:
    key: str
    value: Any
    offset: int | None  # character offset of the member's key in the document, when streamed


class _Incomplete(Exception):
    """The buffer ends inside the current member: read more and try the member again."""


class ObjectMembers:
    """Iterate ``Member``s of the top-level object in ``text``; raises ``JsonStreamError`` on bad input."""

    def __init__(self, text: TextIO, *, max_member_chars: int = MAX_MEMBER_CHARS):
        self._text = text
        self._max_member_chars = max_member_chars
        self._buffer = ""
        self._base = 0  # document offset of buffer[0]
        self._eof = False
        self._scan = json.JSONDecoder().scan_once

    def _fill(self, keep_from: int) -> int:
        """Append the next chunk, dropping buffer[:keep_from]; returns how much was dropped (0 at EOF)."""
        if self._eof:
            raise EOFError
        data = self._text.read(READ_CHARS)
        if not data:
            self._eof = True
            raise EOFError
        self._buffer = self._buffer[keep_from:] + data
        self._base += keep_from
        return keep_from

    def _error(self, message: str, pos: int) -> JsonStreamError:
        return JsonStreamError(message, self._base + pos)

    def _member(self, pos: int) -> tuple[str, Any, int, bool]:
        """Parse one member at ``pos``: (key, value, position after it, whether '}' closed the object)."""
        buf = self._buffer
        match = _KEY_START.match(buf, pos)
        if match is None:
            raise self._error_or_incomplete(buf, pos, "expected a string key")
        try:
            key, end = scanstring(buf, match.end())
        except ValueError as exc:
            raise self._bad_value(exc, match.end()) from None
        match = _COLON.match(buf, end)
        if match is None:
            raise self._error_or_incomplete(buf, end, "expected ':' after a key")
        try:
            value, end = self._scan(buf, match.end())
        except (StopIteration, ValueError) as exc:
            raise self._bad_value(exc, match.end()) from None
        except RecursionError:  # json's scanner recurses once per level: thousands of '[' are its limit
            raise self._error("value nested too deeply to read", match.end()) from None
        match = _AFTER_VALUE.match(buf, end)  # also proves a number did not continue past the buffer
        if match is None:
            raise self._error_or_incomplete(buf, end, "expected ',' or '}' after a value")
        return key, value, match.end(), match.group(1) == "}"

    def _bad_value(self, exc: Exception, pos: int) -> Exception:
        """Before the end of the input a value may just continue in the next chunk; at the end it is bad."""
        if not self._eof:
            return _Incomplete()
        if isinstance(exc, json.JSONDecodeError):
            return self._error(f"bad JSON value ({exc.msg})", exc.pos)
        return self._error("bad JSON value", exc.value if isinstance(exc, StopIteration) else pos)

    def _error_or_incomplete(self, buf: str, pos: int, message: str) -> Exception:
        rest = _WHITESPACE.match(buf, pos)
        return _Incomplete() if rest is not None and rest.end() == len(buf) else self._error(message, pos)

    def __iter__(self) -> Iterator[Member]:
        pos = self._start()
        if pos < 0:
            return
        while True:
            try:
                key, value, end, closed = self._member(pos)
            except _Incomplete:
                if len(self._buffer) - pos > self._max_member_chars:
                    raise self._error("member exceeds the size limit or never ends", pos) from None
                try:
                    pos -= self._fill(pos)
                except EOFError:
                    raise self._final_error(pos) from None
                continue
            yield Member(key, value, self._base + _KEY_START.match(self._buffer, pos).end() - 1)  # type: ignore[union-attr]
            if closed:
                return
            pos = end

    def _start(self) -> int:
        """Position after the opening '{', or -1 for an empty object."""
        while True:
            match = _OPEN.match(self._buffer)
            if match is not None and match.end() < len(self._buffer):
                break
            try:
                self._fill(0)
            except EOFError:
                raise self._error("expected '{' opening the document", 0) from None
        if self._buffer[match.end()] == "}":
            return -1
        return match.end()

    def _final_error(self, pos: int) -> JsonStreamError:
        """The input ended inside a member: say what exactly is wrong with it."""
        try:
            self._member(pos)
        except _Incomplete:
            pass
        except JsonStreamError as exc:
            return exc
        return self._error("the document breaks off inside a member", pos)
