"""Evidence rows by id, and their stored vectors: what the retrievers' ids turn into for ranking and reading.

BM25 returns text, but graph and vector hits are ids only, and the re-rankers need every signal for
every pool member whatever retriever found it. The store keeps the version's evidence as one Arrow
table with an id → row map (the OTT-QA index: 478k rows, ~0.4 GB), and the vector matrix likewise,
so a pool of 1000 is materialized with one ``take`` and scored densely with one matrix product.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from index import layout
from schemas.evidence import Provenance
from schemas.query import ScoredEvidence

COLUMNS = ["evidence_id", "source_type", "text", "title", "page_title", "entity_ids", "provenance"]


@dataclass
class EvidenceRow:
    """One evidence row; its provenance is validated only when asked for (most pool rows never are)."""

    evidence_id: str
    source_type: str
    text: str
    title: str
    page_title: str | None
    entity_ids: list[str]
    raw_provenance: dict

    @cached_property
    def provenance(self) -> Provenance:
        return Provenance.model_validate(self.raw_provenance)

    def scored(self, score: float, **ranking: Any) -> ScoredEvidence:
        """The row as result evidence, with its score and any of signals, ranks and retrieved_by."""
        return ScoredEvidence(
            evidence_id=self.evidence_id,
            source_type=self.source_type,  # type: ignore[arg-type]
            text=self.text,
            title=self.title,
            page_title=self.page_title,
            entity_ids=self.entity_ids,
            provenance=self.provenance,
            score=round(score, 5),
            **ranking,
        )


class EvidenceStore:
    """Read-only after construction, so any number of threads may share one."""

    def __init__(self, table: pa.Table):
        ids = table.column("evidence_id").to_pylist()
        first: dict[str, int] = {}
        for i, evidence_id in enumerate(ids):
            first.setdefault(evidence_id, i)  # same id = same text: the first row stands for all
        self._table = table
        self._row = first

    @classmethod
    def open(cls, version_dir: Path) -> EvidenceStore:
        files = sorted((Path(version_dir) / layout.EVIDENCE).glob("*.parquet"))
        if not files:
            raise FileNotFoundError(
                f"no evidence files under {version_dir / layout.EVIDENCE}: build the index"
            )
        return cls(pa.concat_tables(pq.read_table(f, columns=COLUMNS) for f in files))

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, evidence_id: str) -> bool:
        return evidence_id in self._row

    def get(self, evidence_ids: list[str]) -> list[EvidenceRow]:
        """Rows for the known ids, in the order given; unknown ids are skipped (a stale index)."""
        rows = [self._row[e] for e in evidence_ids if e in self._row]
        if not rows:
            return []
        taken = self._table.take(pa.array(rows, pa.int64())).to_pylist()
        return [
            EvidenceRow(
                evidence_id=r["evidence_id"],
                source_type=r["source_type"],
                text=r["text"],
                title=r["title"],
                page_title=r["page_title"],
                entity_ids=r["entity_ids"] or [],
                raw_provenance=r["provenance"],
            )
            for r in taken
        ]


class VectorMatrix:
    """Every stored evidence vector in memory, to score any pool member against the question.

    Loaded on first use (the vectors of a large index take a few seconds to read).
    """

    def __init__(self, lance_table_reader):
        self._read = lance_table_reader
        self._lock = threading.Lock()
        self._matrix: np.ndarray | None = None
        self._row: dict[str, int] = {}

    def _load(self) -> np.ndarray:
        with self._lock:
            if self._matrix is None:
                table: pa.Table = self._read()
                vectors = table.column("vector").combine_chunks()
                dim = vectors.type.list_size
                flat = pc.list_flatten(vectors).to_numpy(zero_copy_only=False)
                self._row = {e: i for i, e in enumerate(table.column("evidence_id").to_pylist())}
                self._matrix = np.ascontiguousarray(flat.reshape(-1, dim), dtype=np.float32)
            return self._matrix

    def similarity(self, query: np.ndarray, evidence_ids: list[str]) -> np.ndarray:
        """Cosine similarity of the (normalized) query to each id's vector; 0 for ids without one."""
        matrix = self._load()
        out = np.zeros(len(evidence_ids), dtype=np.float32)
        known = [(i, self._row[e]) for i, e in enumerate(evidence_ids) if e in self._row]
        if known:
            positions, rows = zip(*known, strict=True)
            out[list(positions)] = matrix[list(rows)] @ np.asarray(query, dtype=np.float32)
        return out
