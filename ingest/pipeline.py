"""Run every configured reader over its inputs and finish with the cross-shard reports.

The CLI and the Airflow DAGs call these functions; each reader call is also usable alone (one
task per shard). ``sample_inputs`` names the bundled sample dumps the demo and tests run on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from ingest.ottqa import OttqaIngestOptions, ingest_ottqa
from ingest.wikidata.dangling import write_dangling_report
from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata
from ingest.wikidata.properties import write_bundled_properties
from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia
from schemas.ingest import IngestSummary

log = logging.getLogger(__name__)


@dataclass
class IngestInputs:
    wikidata: list[Path] = field(default_factory=list)
    wikipedia: list[Path] = field(default_factory=list)
    ottqa: Path | None = None

    def is_empty(self) -> bool:
        return not (self.wikidata or self.wikipedia or self.ottqa)


@dataclass
class IngestReport:
    summaries: list[IngestSummary]
    out_dir: Path
    dangling_references: int
    dangling_path: Path | None


def sample_inputs(samples_dir: Path) -> IngestInputs:
    """The real sample dumps bundled under ``data/samples``."""
    wikidata = sorted((samples_dir / "wikidata").glob("*.json*"))
    wikipedia = sorted((samples_dir / "wikipedia").glob("*.xml*"))
    ottqa = samples_dir / "ottqa"
    if not wikidata and not wikipedia:
        raise FileNotFoundError(f"no sample dumps under {samples_dir}")
    return IngestInputs(wikidata, wikipedia, ottqa if (ottqa / "tables.json.gz").is_file() else None)


def run_ingest(
    inputs: IngestInputs,
    out_dir: Path,
    *,
    property_table: Path,
    wikidata_options: WikidataIngestOptions | None = None,
    wikipedia_options: WikipediaIngestOptions | None = None,
    ottqa_options: OttqaIngestOptions | None = None,
) -> IngestReport:
    """Ingest all inputs into ``out_dir``, then write the property labels and the dangling report."""
    out_dir = Path(out_dir)
    summaries = []
    write_bundled_properties(out_dir, property_table)
    for path in inputs.wikidata:
        summaries.append(ingest_wikidata(path, out_dir, wikidata_options))
    for path in inputs.wikipedia:
        summaries.append(ingest_wikipedia(path, out_dir, wikipedia_options))
    if inputs.ottqa is not None:
        summaries.append(ingest_ottqa(inputs.ottqa, out_dir, ottqa_options))
    dangling, dangling_path = 0, None
    if inputs.wikidata:
        dangling_path, dangling = write_dangling_report(out_dir)
        log.info("%d referenced entity ids are not in the ingested slice: see %s", dangling, dangling_path)
    return IngestReport(summaries, out_dir, dangling, dangling_path)
