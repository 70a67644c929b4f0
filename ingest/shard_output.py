"""Everything one ingest run writes for one shard of one input: its tables, quarantine and summary.

Names are deterministic (``<table>/<input stem>.<shard>.parquet``), and every file is written
to a temporary name and moved into place, so re-running a shard replaces its earlier output
whole and a crashed run leaves the earlier output intact.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from pydantic import BaseModel

from ingest.files import write_text_atomic
from ingest.parquet_sink import ParquetSink
from schemas.ingest import IngestSummary, TableOutput
from schemas.quarantine import QuarantineRecord

EXCERPT_CHARS = 1000
COMPRESSION_SUFFIXES = (".bz2", ".gz", ".gzip")


class ErrorRateExceeded(RuntimeError):
    """More records were quarantined than the run's error-rate limit allows."""


def input_stem(path: Path) -> str:
    """'wikidata-sample-items' for 'wikidata-sample-items.json.bz2'."""
    name = path.name
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.rsplit(".", 1)[0] if "." in name else name


# Options that change how a run behaves but not what it writes.
NON_OUTPUT_OPTIONS = frozenset({"workers", "max_error_rate"})


def options_fingerprint(options: BaseModel | None) -> str:
    """Hash of the options that shape a reader's output, so an unchanged shard can be recognised."""
    if options is None:
        return ""
    payload = options.model_dump(mode="json", exclude=set(NON_OUTPUT_OPTIONS))
    return hashlib.blake2b(json.dumps(payload, sort_keys=True).encode(), digest_size=16).hexdigest()


def summary_path(out_dir: Path, reader: str, source: Path, shard: str) -> Path:
    return Path(out_dir) / "_runs" / f"{reader}.{input_stem(source)}.{shard}.json"


def _storable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udc80`` escapes: a bad record's id or excerpt may hold
    them (a ``\\ud800`` JSON escape, bytes that are not UTF-8), and the quarantine file must take them."""
    return text if text.isascii() else text.encode("utf-8", errors="backslashreplace").decode("utf-8")


class ShardOutput:
    """Opens one sink per table plus the quarantine; ``finish`` closes them and writes the summary."""

    def __init__(
        self,
        out_dir: Path,
        reader: str,
        source: Path,
        shard: str,
        tables: dict[str, type[BaseModel]],
        *,
        stem: str | None = None,
        options: BaseModel | None = None,
    ):
        self.out_dir = Path(out_dir)
        self.reader = reader
        self.source = Path(source)
        self.shard = shard
        self.stem = stem or input_stem(self.source)
        self.options_fingerprint = options_fingerprint(options)
        self.started = time.perf_counter()
        self.sinks = {
            name: ParquetSink(self.out_dir / name / f"{self.stem}.{shard}.parquet", model)
            for name, model in tables.items()
        }
        self.quarantine = ParquetSink(
            self.out_dir / "quarantine" / f"{reader}.{self.stem}.{shard}.parquet", QuarantineRecord
        )

    def __getitem__(self, table: str) -> ParquetSink:
        return self.sinks[table]

    def reject(
        self,
        *,
        error: BaseException | str,
        excerpt: str | bytes = "",
        line: int | None = None,
        byte_offset: int | None = None,
        char_offset: int | None = None,
        record_id: str | None = None,
        error_type: str | None = None,
    ) -> None:
        """Quarantine one bad record with its position and the reason."""
        if isinstance(excerpt, bytes):
            excerpt = excerpt[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
        self.quarantine.append(
            {
                "source": str(self.source),
                "reader": self.reader,
                "line": line,
                "byte_offset": byte_offset,
                "char_offset": char_offset,
                "record_id": None if record_id is None else _storable(record_id),
                "error_type": error_type
                or (type(error).__name__ if isinstance(error, BaseException) else "error"),
                "error": _storable(str(error)),
                "excerpt": _storable(excerpt[:EXCERPT_CHARS]),
            }
        )

    def abort(self) -> None:
        for sink in [*self.sinks.values(), self.quarantine]:
            sink.abort()

    def finish(
        self,
        *,
        source_sha256: str,
        records_read: int,
        records_written: int,
        records_skipped: int,
        bytes_read: int,
        notes: dict[str, int] | None = None,
        max_error_rate: float | None = None,
    ) -> IngestSummary:
        """Close every file, write the summary JSON, then enforce the error-rate limit."""
        outputs = []
        for name, sink in self.sinks.items():
            sink.close()
            outputs.append(TableOutput(table=name, path=str(sink.path), rows=sink.rows))
        self.quarantine.close()
        outputs.append(
            TableOutput(table="quarantine", path=str(self.quarantine.path), rows=self.quarantine.rows)
        )
        summary = IngestSummary(
            reader=self.reader,
            source=str(self.source),
            source_sha256=source_sha256,
            source_bytes=self.source.stat().st_size,
            shard=self.shard,
            options_fingerprint=self.options_fingerprint,
            records_read=records_read,
            records_written=records_written,
            records_skipped=records_skipped,
            quarantined=self.quarantine.rows,
            bytes_read=bytes_read,
            seconds=round(time.perf_counter() - self.started, 3),
            outputs=outputs,
            counts={o.table: o.rows for o in outputs},
            notes=notes or {},
        )
        path = summary_path(self.out_dir, self.reader, self.source, self.shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(relative_outputs(summary, self.out_dir).model_dump(), indent=2))
        if max_error_rate is not None and summary.quarantined and summary.error_rate > max_error_rate:
            raise ErrorRateExceeded(
                f"{self.reader}: {summary.quarantined} of {records_read} records from {self.source.name} "
                f"({summary.error_rate:.1%}) were quarantined, above the limit of {max_error_rate:.1%}. "
                f"Good records were written; inspect {self.quarantine.path} "
                f"or raise the limit (--max-error-rate)."
            )
        return summary


def relative_outputs(summary: IngestSummary, out_dir: Path) -> IngestSummary:
    """The summary as saved: output paths relative to the ingest folder, which another machine may
    mount elsewhere (``read_summary`` resolves them against its own mount)."""
    root = Path(out_dir).resolve()
    outputs = [
        o.model_copy(update={"path": str(Path(o.path).resolve().relative_to(root))})
        if Path(o.path).resolve().is_relative_to(root)
        else o
        for o in summary.outputs
    ]
    return summary.model_copy(update={"outputs": outputs})


def read_summary(path: Path, out_dir: Path) -> IngestSummary:
    """A saved summary with its output paths resolved against ``out_dir`` (absolute ones, as written
    before paths were saved relative, stay as they are)."""
    summary = IngestSummary.model_validate_json(Path(path).read_text())
    outputs = [o.model_copy(update={"path": str(Path(out_dir) / o.path)}) for o in summary.outputs]
    return summary.model_copy(update={"outputs": outputs})
