"""Benchmark question files, read into one shape: ``BenchmarkQuestion`` with its gold answers.

Two formats: OTT-QA's ``dev.json`` (open QA over Wikipedia tables and passages) and the KGQA family
(CompMix, TimeQuestions and look-alikes: JSON list or JSONL, with Wikidata answers). Loaders are lenient
about key spellings but never guess content: an item without a question or without answers is an error
naming the file and the item (0-based index in a JSON list, 1-based line in JSONL).
"""

from __future__ import annotations

import gzip
import itertools
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

_QID = re.compile(r"^[QPL][1-9]\d*$")
_WIKIDATA_TIME = re.compile(r"^[+]?(\d{4}-\d{2}-\d{2})T00:00:00Z$")


class AnswerSpec(BaseModel):
    """One gold answer: the text to match, its Wikidata id when it is an entity, and accepted variants."""

    text: str
    entity_id: str | None = None
    aliases: list[str] = Field(default_factory=list)


class BenchmarkQuestion(BaseModel):
    id: str
    question: str
    answers: list[AnswerSpec]
    gold_table_id: str | None = Field(None, description="the table holding the answer (OTT-QA)")
    entities: list[str] = Field(default_factory=list, description="Wikidata ids named in the question")
    meta: dict[str, str] = Field(default_factory=dict, description="other scalar fields of the item")

    def answer_texts(self) -> list[str]:
        """Every accepted answer string (texts, then aliases), without duplicates, in order."""
        seen: dict[str, None] = {}
        for answer in self.answers:
            seen.setdefault(answer.text)
            for alias in answer.aliases:
                seen.setdefault(alias)
        return list(seen)


class BenchmarkLoader(Protocol):
    name: str

    def load(self, path: Path, limit: int | None = None) -> list[BenchmarkQuestion]: ...


class _RawItem(BaseModel):
    """One item of a question file with where it was found, for error messages."""

    where: str = Field(description="'item 3' (0-based, JSON list) or 'line 4' (1-based, JSONL)")
    data: dict[str, Any]


class _JsonQuestionFile:
    """Shared reading for the JSON loaders; subclasses turn one item into a ``BenchmarkQuestion``."""

    name: str
    default_name: str | None = None

    def load(self, path: Path, limit: int | None = None) -> list[BenchmarkQuestion]:
        path = _resolve(Path(path), default_name=self.default_name)
        questions = [self._question(path, item) for item in _limited(_read_items(path), limit)]
        _check_unique(path, questions)
        log.info("loaded %d %s questions from %s", len(questions), self.name, path)
        return questions

    def _question(self, path: Path, item: _RawItem) -> BenchmarkQuestion:
        raise NotImplementedError


class OttqaLoader(_JsonQuestionFile):
    """OTT-QA ``dev.json``: a JSON list of ``question_id``, ``question``, ``table_id``, ``answer-text``."""

    name = "ottqa"
    default_name = "dev.json"
    _consumed = frozenset({"question_id", "question", "table_id", "answer-text", "question_postag"})

    def _question(self, path: Path, item: _RawItem) -> BenchmarkQuestion:
        data = item.data
        question = _text(data.get("question"))
        if not question:
            raise ValueError(f"{path}, {item.where}: no question (key 'question'); fix or drop the item")
        raw_answer = data.get("answer-text")
        texts = raw_answer if isinstance(raw_answer, list) else [raw_answer]
        answers = [AnswerSpec(text=t) for t in (_text(x) for x in texts) if t]
        if not answers:
            raise ValueError(f"{path}, {item.where}: no answer (key 'answer-text'); fix or drop the item")
        return BenchmarkQuestion(
            id=_text(data.get("question_id")) or _fallback_id(item),
            question=question,
            answers=answers,
            gold_table_id=_text(data.get("table_id")) or None,
            meta=_meta(data, self._consumed),
        )


class KgqaLoader(_JsonQuestionFile):
    """CompMix / TimeQuestions style: a JSON list (or JSONL) of questions with Wikidata answers.

    Accepted spellings: question ``question``/``Question``; id ``question_id``/``Id``/``id``; entities
    ``entities``/``Entities`` (``{id, label}`` dicts or ids); answers ``answers``/``Answer``/``answer``
    (``{id, label}`` dicts, TimeQuestions ``{AnswerArgument, EntityLabel|WikidataLabel, WikidataQid}``
    dicts, or plain strings and numbers).
    """

    name = "kgqa"
    _question_keys = ("question", "Question")
    _id_keys = ("question_id", "Id", "id")
    _entity_keys = ("entities", "Entities")
    _answer_keys = ("answers", "Answer", "answer")
    _consumed = frozenset(_question_keys + _id_keys + _entity_keys + _answer_keys)

    def _question(self, path: Path, item: _RawItem) -> BenchmarkQuestion:
        data = item.data
        question = _text(_first(data, self._question_keys))
        if not question:
            keys = "/".join(self._question_keys)
            raise ValueError(f"{path}, {item.where}: no question (keys {keys}); fix or drop the item")
        raw_answers = _first(data, self._answer_keys)
        if not isinstance(raw_answers, list):
            raw_answers = [] if raw_answers is None else [raw_answers]
        answers = [a for a in (_answer_spec(x) for x in raw_answers) if a is not None]
        if not answers:
            keys = "/".join(self._answer_keys)
            raise ValueError(f"{path}, {item.where}: no answers (keys {keys}); fix or drop the item")
        return BenchmarkQuestion(
            id=_text(_first(data, self._id_keys)) or _fallback_id(item),
            question=question,
            answers=answers,
            entities=_entity_ids(_first(data, self._entity_keys)),
            meta=_meta(data, self._consumed),
        )


LOADERS: dict[str, BenchmarkLoader] = {loader.name: loader for loader in (OttqaLoader(), KgqaLoader())}


def load_benchmark(name: str, path: Path, limit: int | None = None) -> list[BenchmarkQuestion]:
    """The questions of benchmark file ``path`` read by the loader registered as ``name``."""
    loader = LOADERS.get(name)
    if loader is None:
        raise ValueError(f"unknown benchmark format {name!r}; known: {', '.join(sorted(LOADERS))}")
    return loader.load(Path(path), limit=limit)


# --- reading ---------------------------------------------------------------------------------------


def _resolve(path: Path, default_name: str | None) -> Path:
    if path.is_dir():
        if default_name is not None:
            candidate = path / default_name
            if not candidate.is_file():
                raise FileNotFoundError(f"{path} is a folder without {default_name}; pass the question file")
            return candidate
        files = sorted(p for p in path.iterdir() if p.name.endswith((".json", ".jsonl", ".json.gz")))
        if len(files) != 1:
            found = ", ".join(p.name for p in files) or "no .json/.jsonl file"
            raise ValueError(f"{path} is a folder ({found}); pass the question file itself")
        return files[0]
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file {path} does not exist")
    return path


def _read_items(path: Path) -> Iterator[_RawItem]:
    """Items of a JSON list (or ``{"questions": [...]}``) or of a JSONL file, lazily for JSONL."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    stripped = data.lstrip()
    is_jsonl = path.name.removesuffix(".gz").endswith(".jsonl") or stripped.startswith(b"{")
    if is_jsonl and not _is_single_object(stripped):
        yield from _jsonl_items(path, data)
        return
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err}); expected a list of questions") from err
    for i, obj in enumerate(_question_list(path, parsed)):
        if not isinstance(obj, dict):
            raise ValueError(f"{path}, item {i}: expected an object, got {type(obj).__name__}")
        yield _RawItem(where=f"item {i}", data=obj)


def _is_single_object(stripped: bytes) -> bool:
    """A whole-file object such as ``{"questions": [...]}`` rather than one object per line."""
    if not stripped.startswith(b"{"):
        return False
    try:
        parsed = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and any(isinstance(parsed.get(k), list) for k in _WRAPPER_KEYS)


_WRAPPER_KEYS = ("questions", "Questions", "data")


def _question_list(path: Path, parsed: Any) -> list[Any]:
    if isinstance(parsed, list):
        return parsed
    if isinstance(parsed, dict):
        for key in _WRAPPER_KEYS:
            if isinstance(parsed.get(key), list):
                return parsed[key]
    raise ValueError(f"{path}: expected a JSON list of questions, got {type(parsed).__name__}")


def _jsonl_items(path: Path, data: bytes) -> Iterator[_RawItem]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            raise ValueError(f"{path}, line {number}: malformed JSON ({err}); fix or drop the line") from err
        if not isinstance(obj, dict):
            raise ValueError(f"{path}, line {number}: expected an object, got {type(obj).__name__}")
        yield _RawItem(where=f"line {number}", data=obj)


def _limited(items: Iterator[_RawItem], limit: int | None) -> Iterator[_RawItem]:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    return itertools.islice(items, limit)  # stops before reading past the limit (a later bad line is fine)


def _check_unique(path: Path, questions: list[BenchmarkQuestion]) -> None:
    seen: dict[str, int] = {}
    for i, q in enumerate(questions):
        if q.id in seen:
            raise ValueError(
                f"{path}: question id {q.id!r} appears twice (questions {seen[q.id]} and {i}, 0-based); "
                "ids must be unique"
            )
        seen[q.id] = i


# --- fields ----------------------------------------------------------------------------------------


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[k] for k in keys if data.get(k) not in (None, "")), None)


def _text(value: Any) -> str:
    """A scalar as stripped text; '' for None, containers and empty strings."""
    if value is None or isinstance(value, dict | list | bool):
        return ""
    return str(value).strip()


def _fallback_id(item: _RawItem) -> str:
    return item.where.replace(" ", "-")


def _answer_spec(raw: Any) -> AnswerSpec | None:
    if isinstance(raw, dict):
        return _answer_from_dict(raw)
    text = _text(raw)
    if not text:
        return None
    return AnswerSpec(text=text, entity_id=text if _QID.match(text) else None, aliases=_time_aliases(text))


def _answer_from_dict(raw: dict[str, Any]) -> AnswerSpec | None:
    label = _text(
        _first(raw, ("label", "EntityLabel", "WikidataLabel", "EntityName", "text", "name", "value"))
    )
    ids = [_text(raw.get(k)) for k in ("id", "WikidataQid", "AnswerArgument")]
    argument = next((v for v in ids if v), "")
    qid = next((v for v in ids if _QID.match(v)), None)
    text = label or (argument if argument != qid else "")
    if not text:
        if qid is None:
            return None
        text = qid  # an entity without a label still counts; matching its id is better than dropping it
    aliases = [_text(a) for a in raw.get("aliases") or [] if _text(a)]
    literal = argument if argument and argument != qid else ""
    for variant in (literal, *_time_aliases(literal)):
        if variant and variant != text and variant not in aliases:
            aliases.append(variant)
    return AnswerSpec(text=text, entity_id=qid, aliases=aliases)


def _time_aliases(text: str) -> list[str]:
    """A Wikidata day timestamp ('2012-03-01T00:00:00Z') also answers as its ISO date."""
    match = _WIKIDATA_TIME.match(text)
    return [match.group(1)] if match else []


def _entity_ids(raw: Any) -> list[str]:
    if not isinstance(raw, list):
        raw = [] if raw is None else [raw]
    ids: list[str] = []
    for entity in raw:
        value = (
            _text(_first(entity, ("id", "WikidataQid", "qid"))) if isinstance(entity, dict) else _text(entity)
        )
        if value and value not in ids:
            ids.append(value)
    return ids


def _meta(data: dict[str, Any], consumed: frozenset[str]) -> dict[str, str]:
    """Other scalar fields (and lists of scalars, comma-joined) as text, e.g. a question type or domain."""
    meta: dict[str, str] = {}
    for key, value in data.items():
        if key in consumed or value is None or isinstance(value, dict):
            continue
        if isinstance(value, list):
            if not all(isinstance(v, str | int | float) for v in value):
                continue
            value = ", ".join(str(v) for v in value)
        meta[key] = str(value)
    return meta
