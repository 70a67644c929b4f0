"""The streaming reader of one huge JSON object."""

from __future__ import annotations

import io
import json

import pytest

from ingest import json_stream
from ingest.json_stream import JsonStreamError, ObjectMembers


def test_members_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_stream, "READ_CHARS", 7)
    document = {"/wiki/A": "text é", "b": {"x": [1, 2.5e3, None]}, "c": 12345678901234, "d": ""}
    text = json.dumps(document)
    members = list(ObjectMembers(io.StringIO(text)))
    assert {m.key: m.value for m in members} == document
    assert [text[m.offset : m.offset + len(json.dumps(m.key))] for m in members] == [
        json.dumps(k) for k in document
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "b": [1, 2', "bad JSON value"),
        ('{"a": 1, "b": [1, 2 x], "c": 3}', r"bad JSON value \(Expecting ',' delimiter\) at character 20"),
        ('{"a": 1 "b": 2}', "expected ',' or '}'"),
        ("[1, 2]", "expected '{'"),
        ('{"a": 1,', "breaks off inside a member|expected a string key"),
        ('{"a": 1, 2: 3}', "expected a string key"),
        (
            '{"a": 1, "b": ' + "[" * 100_000 + "]" * 100_000 + "}",
            r"nested too deeply to read at character 14",
        ),
    ],
)
def test_bad_documents_raise_with_their_offset(text: str, message: str) -> None:
    reader = ObjectMembers(io.StringIO(text))
    with pytest.raises(JsonStreamError, match=message) as info:
        list(reader)
    assert 0 <= info.value.offset <= len(text)


def test_empty_object() -> None:
    assert list(ObjectMembers(io.StringIO(" { } "))) == []
