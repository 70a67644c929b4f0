"""Question files for batch answering: JSONL or Parquet with ``id`` and ``question``.

Nothing of the input is lost: a malformed line (bad JSON, missing id or question, duplicate id)
is kept as an entry with its line number and the reason, and becomes an output row with ``error``
set, so an answers file has exactly one row per input line, in input order.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from schemas.answers import Question

log = logging.getLogger(__name__)


class QuestionEntry(BaseModel):
    """One input line (JSONL) or row (Parquet), valid or not: rejected ones still become output rows."""

    line: int = Field(description="1-based line (JSONL) or row (Parquet) in the input file")
    id: str | None = Field(None, description="the id, when one could be read")
    question: str | None = Field(None, description="the question text, when one could be read")
    error: str | None = Field(None, description="why the entry was rejected; None for a valid question")


class QuestionFile(BaseModel):
    """A question file as read: every entry in input order, and the checksum of the bytes parsed."""

    path: Path
    sha256: str
    entries: list[QuestionEntry]
    blank_lines: int = Field(0, description="whitespace-only JSONL lines, skipped (they hold no question)")

    @property
    def questions(self) -> list[Question]:
        return [Question(id=e.id, question=e.question) for e in self.entries if e.error is None]

    @property
    def rejected(self) -> list[QuestionEntry]:
        return [e for e in self.entries if e.error is not None]


def read_questions(path: Path) -> QuestionFile:
    """Read a ``.jsonl`` (objects with ``id`` and ``question``) or ``.parquet`` (same columns) file.

    Malformed entries (bad JSON, missing or empty id or question, duplicate id) are kept, with their
    line and reason, so they reach the output as error rows. A missing file, an unreadable Parquet,
    missing columns or a file without a single valid question raise, naming the path.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question file {path} does not exist")
    data = path.read_bytes()  # hashed and parsed from the same bytes: the checksum matches what was read
    suffix = path.suffix.lower()
    blank_lines = 0
    if suffix == ".jsonl":
        entries, blank_lines = _jsonl_entries(data)
    elif suffix == ".parquet":
        entries = _parquet_entries(path, data)
    else:
        raise ValueError(f"{path}: unknown question file type {path.suffix!r}; use .jsonl or .parquet")
    questions = QuestionFile(
        path=path, sha256=hashlib.sha256(data).hexdigest(), entries=entries, blank_lines=blank_lines
    )
    _check_has_questions(questions)
    return questions


def _check_has_questions(questions: QuestionFile) -> None:
    rejected = questions.rejected
    if len(rejected) == len(questions.entries):
        first = f"; first: line {rejected[0].line}: {rejected[0].error}" if rejected else ""
        raise ValueError(
            f"{questions.path} holds no valid question ({len(rejected)} rejected entries{first}); "
            "expected one JSON object per line (or Parquet columns) with non-empty 'id' and 'question'"
        )
    if rejected:
        log.warning(
            "%s: %d of %d entries rejected, kept as error rows (first: line %d: %s)",
            questions.path,
            len(rejected),
            len(questions.entries),
            rejected[0].line,
            rejected[0].error,
        )


def _jsonl_entries(data: bytes) -> tuple[list[QuestionEntry], int]:
    entries: list[QuestionEntry] = []
    seen: dict[str, int] = {}
    blank = 0
    for line, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            blank += 1
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            entries.append(QuestionEntry(line=line, error=f"not valid JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            kind = type(obj).__name__
            entries.append(QuestionEntry(line=line, error=f"expected a JSON object, got {kind}"))
            continue
        entries.append(_entry(line, obj.get("id"), obj.get("question"), seen))
    return entries, blank


def _parquet_entries(path: Path, data: bytes) -> list[QuestionEntry]:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{path} is not a readable Parquet file: {exc}") from exc
    missing = sorted({"id", "question"} - set(table.column_names))
    if missing:
        raise ValueError(
            f"{path} lacks column(s) {missing} (it has {table.column_names}); "
            "a Parquet question file needs columns 'id' and 'question'"
        )
    seen: dict[str, int] = {}
    ids, texts = table["id"].to_pylist(), table["question"].to_pylist()
    return [_entry(row, i, q, seen) for row, (i, q) in enumerate(zip(ids, texts, strict=True), start=1)]


def _entry(line: int, raw_id: object, raw_question: object, seen: dict[str, int]) -> QuestionEntry:
    """Validate one (id, question) pair; ``seen`` maps ids to their first line, to catch duplicates."""
    qid = str(raw_id) if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    text = raw_question if isinstance(raw_question, str) else None
    error = None
    if raw_id is not None and qid is None:
        error = f"'id' must be a string or an integer, got {type(raw_id).__name__}"
    elif not (qid and qid.strip()):
        error = "missing or empty 'id'"
    elif raw_question is not None and text is None:
        error = f"'question' must be a string, got {type(raw_question).__name__}"
    elif not (text and text.strip()):
        error = "missing or empty 'question'"
    elif qid in seen:
        error = f"duplicate id {qid!r} (first on line {seen[qid]})"
    else:
        seen[qid] = line
    return QuestionEntry(line=line, id=qid or None, question=text or None, error=error)
