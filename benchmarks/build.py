"""Index build throughput on the OTT-QA corpus, each stage beside the raw speed of its engine.

    .venv/bin/python benchmarks/build.py --ottqa DIR [--embed-limit N] [--rounds 2] [--work DIR] [--out DIR]
        [--wikidata-copies 5] [--reader-workers 2] [--stages wikidata,ottqa,verbalize,bm25,graph,embeddings]

Stages and their raw baselines, measured in the same run:
- verbalize: ``verbalize_file`` vs reading the same ingest rows into Python dicts (the floor cost of
  touching every record in Python), interleaved file by file for ``--rounds`` rounds so both see the
  same machine load; the name tables are built first (the build's plan step does that) and timed apart;
- BM25: ``build_bm25`` vs bare Tantivy indexing the same documents (same schema and writer) from Python
  lists in memory, interleaved for ``--rounds`` rounds;
- embeddings: ``Embedder.encode`` (length-batched) vs ``SentenceTransformer.encode`` on the same texts;
  plus what a 128-token cap costs: speed, and top-10 agreement with the uncapped vectors on the
  OTT-QA dev questions;
- ANN: recall@10 of the LanceDB ANN index against exact search, dev questions as queries;
- graph: ``build_graph`` (DuckDB tables + Kùzu COPY) edges/s vs COPY of the same edge files into a
  bare database;
- the two ingest readers the issue holds to the same bar (``build_readers``): Wikidata on plain JSON vs
  ``orjson.loads``, the OTT-QA adapter vs gzip + ``json.load``, interleaved rounds as for verbalize.
Embedding the whole corpus takes about an hour on 2 cores; ``--embed-limit`` embeds a random sample of
that many evidence rows (the ANN measurement then runs on that sample) and the report says so.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import tantivy

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import machine  # noqa: E402
from build_readers import ottqa_adapter, wikidata_plain  # noqa: E402

from index import layout  # noqa: E402
from index.bm25 import COLUMNS as BM25_COLUMNS  # noqa: E402
from index.bm25 import WRITER_HEAP_BYTES, build_bm25, evidence_schema  # noqa: E402
from index.build_stages import dir_bytes  # noqa: E402
from index.duck import MemoryBudget, connect  # noqa: E402
from index.embedder import Embedder, EmbedderSettings  # noqa: E402
from index.entities import build_entities  # noqa: E402
from index.evidence import ingest_files, verbalize_file  # noqa: E402
from index.evidence_reader import EvidenceReader, write_duplicates  # noqa: E402
from index.graph_build import build_graph  # noqa: E402
from index.kuzu_store import GraphStore  # noqa: E402
from index.names import NameStore, build_names  # noqa: E402
from index.vectors import VectorIndex, VectorIndexSettings, ann_recall_at_k, build_vector_index  # noqa: E402
from ingest.ottqa import ingest_ottqa  # noqa: E402
from schemas.settings import HqaSettings  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def raw_rows(path: Path) -> int:
    rows = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000):
        rows += len(batch.to_pylist())
    return rows


def verbalize_rounds(ingest_dir: Path, out: Path, names: NameStore, rounds: int) -> dict:
    """Raw reads and our verbalizer, file after file, round after round: seconds of each, summed."""
    raw_s = ours_s = 0.0
    records = evidence = 0
    per_round = []
    for _ in range(rounds):
        round_raw = round_ours = 0.0
        for table, path in ingest_files(ingest_dir):
            seconds, rows = timed(lambda path=path: raw_rows(path))
            round_raw += seconds
            seconds, stats = timed(lambda table=table, path=path: verbalize_file(table, path, out, names))
            round_ours += seconds
            records, evidence = records + stats.records, evidence + stats.evidence
            assert rows == stats.records
        per_round.append({"raw_s": round(round_raw, 2), "ours_s": round(round_ours, 2),
                          "ratio": round(round_raw / round_ours, 3)})  # fmt: skip
        raw_s, ours_s = raw_s + round_raw, ours_s + round_ours
    return {"raw_s": raw_s, "ours_s": ours_s, "records": records // rounds, "evidence": evidence // rounds,
            "rounds": per_round}  # fmt: skip


def raw_tantivy(columns: list[list], out: Path) -> None:
    """Bare Tantivy over the documents of the BM25 stage: its schema, its fields, its writer settings,
    built from Python lists already in memory (no Parquet, no batches). The document is written out
    here as ``index.bm25.build_bm25`` writes it, on purpose: the raw engine does not go through our code."""
    out.mkdir(parents=True)
    index = tantivy.Index(evidence_schema(), path=str(out))
    writer = index.writer(heap_size=max(2 * 15_000_000, WRITER_HEAP_BYTES), num_threads=2)
    for ev_id, source_type, title, text, entity_ids, page_title in zip(*columns, strict=True):
        writer.add_document(
            tantivy.Document(
                evidence_id=ev_id,
                source_type=source_type,
                title=title,
                text=text,
                entity_ids=entity_ids,
                page_title=page_title or "",
            )
        )
    writer.commit()
    writer.wait_merging_threads()


def raw_kuzu_copy(work: Path, db: Path) -> int:
    """COPY the graph's own edge files into a bare database with the same schema: the engine's speed.
    The files are first cut to the columns each COPY loads (untimed), so the COPYs timed are Kùzu's
    alone."""
    from index.graph import COPY_COLUMNS, NODE_TABLES, REL_TABLES, SCHEMA

    raw = work / "raw-copy"
    raw.mkdir(exist_ok=True)
    for name in (*NODE_TABLES, *REL_TABLES):
        table = pq.read_table(work / f"{name}.parquet", columns=list(COPY_COLUMNS[name]))
        pq.write_table(table, raw / f"{name}.parquet")
    with GraphStore.create(db) as store:
        store.ddl(SCHEMA)
        for name in NODE_TABLES:
            store.copy_from(name, raw / f"{name}.parquet")
        start = time.perf_counter()
        for name in REL_TABLES:
            if pq.ParquetFile(raw / f"{name}.parquet").metadata.num_rows:
                store.copy_from(name, raw / f"{name}.parquet")
        seconds = time.perf_counter() - start
        edges = sum(store.count(n) for n in REL_TABLES)
    return edges / seconds


def top_k(matrix: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ matrix.T), axis=1)[:, :k]


EMBED_MODEL = "all-MiniLM-L6-v2"
"""The transformer the embeddings row compares with its bare SentenceTransformer (the build's default
embedder is now a static model, which has no such raw engine)."""

STAGES = ("wikidata", "ottqa", "verbalize", "bm25", "graph", "embeddings")
"""What ``--stages`` may name. Stages after the readers need the evidence: when ``verbalize`` is not among
them it still runs, once and untimed, to make it."""


def run(args: argparse.Namespace) -> dict:
    stages = set(args.stages)
    settings = HqaSettings()
    work = args.work
    ingest_dir = work / "ingest"
    result: dict = {"command": "python " + " ".join(shlex.quote(a) for a in sys.argv), "machine": machine()}
    rows: list[dict] = Rows()
    if stages & {"wikidata", "ottqa"}:
        rows += reader_rows(args, stages)
    if stages & {"verbalize", "bm25", "graph", "embeddings"}:
        index_stages(args, stages, settings, ingest_dir, rows, result)
    result["rows"] = [
        {**r, "raw": round(r["raw"], 1), "ours": round(r["ours"], 1), "ratio": round(r["ours"] / r["raw"], 2)}
        for r in rows
    ]
    return result


class Rows(list):
    """The result rows, each printed as it is measured: a stage that fails later loses none of them."""

    def append(self, row: dict) -> None:
        print(json.dumps(row), flush=True)
        super().append(row)

    def __iadd__(self, rows):  # type: ignore[override]
        for row in rows:
            self.append(row)
        return self


def reader_rows(args: argparse.Namespace, stages: set[str]) -> list[dict]:
    readers = args.work / "readers"
    shutil.rmtree(readers, ignore_errors=True)
    readers.mkdir()
    rows = []
    if "wikidata" in stages:
        rows.append(wikidata_plain(readers, args.wikidata_copies, args.reader_workers, args.rounds))
    if "ottqa" in stages:
        rows.append(ottqa_adapter(args.ottqa, readers, args.reader_workers, args.rounds))
    shutil.rmtree(readers)
    return rows


def verbalize_once(ingest_dir: Path, out: Path, names: NameStore) -> dict:
    """The evidence the later stages need, made without timing when verbalize is not measured."""
    records = evidence = 0
    for table, path in ingest_files(ingest_dir):
        stats = verbalize_file(table, path, out, names)
        records, evidence = records + stats.records, evidence + stats.evidence
    return {"records": records, "evidence": evidence, "rounds": []}


def index_stages(
    args: argparse.Namespace,
    stages: set[str],
    settings: HqaSettings,
    ingest_dir: Path,
    rows: list[dict],
    result: dict,
) -> None:
    """Verbalize, then BM25, graph and embeddings over its evidence: the rows and sections asked for."""
    work = args.work
    if not (ingest_dir / "_runs").is_dir():
        seconds, summary = timed(lambda: ingest_ottqa(args.ottqa, ingest_dir))
        print(f"ingest: {summary.records_read:,} records in {seconds:.1f} s")
    version = work / "version"
    shutil.rmtree(version, ignore_errors=True)
    (version / layout.EVIDENCE).mkdir(parents=True)
    budget = MemoryBudget(memory_mb=settings.index.memory_mb)
    with connect(budget, work / "spill-names", database=work / "names.duckdb") as con:
        names_s, name_stats = timed(lambda: build_names(ingest_dir, work / "names", con))
    (work / "names.duckdb").unlink()
    con = connect(budget, work / "spill")
    names = NameStore(work / "names", con, settings.unit_table)

    if "verbalize" in stages:
        verbalized = verbalize_rounds(ingest_dir, version / layout.EVIDENCE, names, args.rounds)
        records = verbalized["records"]
        rows.append(
            {"stage": "verbalize", "engine": "Parquet rows -> Python dicts", "unit": "records/s",
             "raw": records * args.rounds / verbalized["raw_s"],
             "ours": records * args.rounds / verbalized["ours_s"],
             "items": records,
             "note": f"{verbalized['evidence']:,} evidence rows; {args.rounds} interleaved rounds "
                     f"{[r['ratio'] for r in verbalized['rounds']]}; name tables {names_s:.1f} s apart"}
        )  # fmt: skip
        result["verbalize_rounds"] = verbalized["rounds"]
        result["name_tables"] = {**name_stats.model_dump(), "seconds": round(names_s, 2)}
    else:
        verbalize_once(ingest_dir, version / layout.EVIDENCE, names)
    write_duplicates(version / layout.EVIDENCE, version / layout.EVIDENCE_DUPLICATES, con)
    reader = EvidenceReader(version)
    evidence = pa.Table.from_batches(list(reader.batches([*BM25_COLUMNS])))  # the benchmark's own copy
    result["evidence"] = {k: v for k, v in pl.from_arrow(evidence)["source_type"].value_counts().iter_rows()}
    result["full_corpus_evidence"] = evidence.num_rows

    if "bm25" in stages:
        rows.append(bm25_row(evidence, reader, version, work, args.rounds))
    if "graph" in stages:
        rows.append(graph_row(ingest_dir, names, reader, version, con, budget, work, result))
    if "embeddings" in stages:
        rows.append(embedding_row(args, evidence, version, result))
    sizes = (layout.EVIDENCE, layout.BM25, layout.ALIAS_INDEX, layout.VECTORS, layout.GRAPH)
    result["sizes_MB"] = {n: round(dir_bytes(version / n) / 1e6, 1) for n in sizes if (version / n).exists()}


def bm25_row(evidence: pa.Table, reader: EvidenceReader, version: Path, work: Path, rounds: int) -> dict:
    """``build_bm25`` reading the evidence Parquet in batches vs bare Tantivy indexing the same documents
    from memory, interleaved for ``rounds`` rounds so both see the same machine load."""
    columns = [evidence[c].to_pylist() for c in BM25_COLUMNS]
    raw_s = ours_s = 0.0
    per_round = []
    for _ in range(rounds):
        shutil.rmtree(work / "raw_tantivy", ignore_errors=True)
        shutil.rmtree(version / layout.BM25, ignore_errors=True)
        seconds, _ = timed(lambda: raw_tantivy(columns, work / "raw_tantivy"))
        bm25 = build_bm25(reader.batches(BM25_COLUMNS), version / layout.BM25, total=reader.rows())
        per_round.append(round(seconds / bm25.seconds, 3))
        raw_s, ours_s = raw_s + seconds, ours_s + bm25.seconds
    shutil.rmtree(work / "raw_tantivy")
    return {
        "stage": "BM25 (Tantivy)",
        "engine": "bare Tantivy, same schema and documents from memory",
        "unit": "docs/s",
        "raw": evidence.num_rows * rounds / raw_s,
        "ours": evidence.num_rows * rounds / ours_s,
        "items": evidence.num_rows,
        "note": f"{rounds} interleaved rounds {per_round}",
    }


def graph_row(
    ingest_dir: Path,
    names: NameStore,
    reader: EvidenceReader,
    version: Path,
    con: duckdb.DuckDBPyConnection,
    budget: MemoryBudget,
    work: Path,
    result: dict,
) -> dict:
    (version / layout.ENTITIES).mkdir()
    entity_stats = build_entities(
        ingest_dir, names.dir, version / layout.ENTITY_TABLE, version / layout.ALIAS_TABLE,
        version / layout.ALIAS_INDEX, con, budget, work / "entities-work",
    )  # fmt: skip
    result["aliases"] = {
        "aliases": entity_stats.aliases,
        "entities": entity_stats.entities,
        "seconds": entity_stats.seconds,
    }
    graph_work = work / "graph_work"
    shutil.rmtree(graph_work, ignore_errors=True)
    (version / layout.GRAPH).mkdir()
    graph_db = version / layout.GRAPH_DB
    records_path = version / layout.ENTITY_TABLE
    graph = build_graph(ingest_dir, reader, records_path, names, graph_db, graph_work, budget)
    raw_edges_s = raw_kuzu_copy(graph_work, work / "raw.kuzu")
    (work / "raw.kuzu").unlink()
    result["graph"] = {"nodes": graph.nodes, "edges": graph.edges}
    return {
        "stage": "graph (Kùzu COPY)",
        "engine": "bare Kùzu COPY of the same edge files",
        "unit": "edges/s",
        "raw": raw_edges_s,
        "ours": graph.edges_per_second,
        "items": sum(graph.edges.values()),
        "note": f"whole graph stage {graph.seconds:.1f} s incl. DuckDB tables",
    }


def embedding_row(args: argparse.Namespace, evidence: pa.Table, version: Path, result: dict) -> dict:
    """Embeddings of a random sample beside the bare model, the cost of a 128-token cap, and ANN recall."""
    rng = random.Random(0)
    sample = sorted(rng.sample(range(evidence.num_rows), min(args.embed_limit, evidence.num_rows)))
    subset = evidence.take(pa.array(sample))
    embedder = Embedder(EmbedderSettings(model=EMBED_MODEL))
    sub_texts = subset["text"].to_pylist()
    probe = sub_texts[: args.raw_embed]
    raw_s, _ = timed(lambda: embedder.model.encode(probe, batch_size=64, normalize_embeddings=True))
    ours_s, vectors = timed(lambda: embedder.encode(sub_texts))
    questions = [q["question"] for q in json.loads((args.ottqa / "dev.json").read_text())][: args.queries]
    query_vectors = embedder.encode(questions)
    capped = Embedder(EmbedderSettings(model=EMBED_MODEL, max_seq_length=128))
    cap_s, capped_vectors = timed(lambda: capped.encode(sub_texts[: args.raw_embed]))
    base = vectors[: args.raw_embed]
    agree = np.mean(
        [len(set(a) & set(b)) / 10 for a, b in zip(
            top_k(base, query_vectors, 10), top_k(capped_vectors, query_vectors, 10), strict=True)]
    )  # fmt: skip
    result["sequence_cap"] = {
        "texts": len(base),
        "uncapped_s": round(ours_s * len(base) / len(sub_texts), 1),
        "cap128_s": round(cap_s, 1),
        "top10_agreement": round(float(agree), 4),
    }
    table = pa.table(
        {
            "evidence_id": subset["evidence_id"],
            "source_type": subset["source_type"],
            "page_title": subset["page_title"],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
        }
    )
    vector_settings = VectorIndexSettings(ann_min_rows=min(args.embed_limit, 10_000))
    vstats = build_vector_index(table, version / layout.VECTORS, vector_settings)
    index = VectorIndex.open(version / layout.VECTORS)
    recall = ann_recall_at_k(index, query_vectors, k=10)
    ann_lat = []
    for q in query_vectors[:100]:
        t, _ = timed(lambda q=q: index.search(q, 10))
        ann_lat.append(t * 1000)
    result["ann"] = {
        "vectors": table.num_rows,
        "recall_at_10": round(recall, 4),
        "queries": len(questions),
        "p50_ms": round(float(np.median(ann_lat)), 2),
        "settings": vector_settings.model_dump(),
        "index": vstats.model_dump(),
    }
    return {
        "stage": "embeddings (MiniLM-L6)",
        "engine": "SentenceTransformer.encode, batch 64",
        "unit": "texts/s",
        "raw": len(probe) / raw_s,
        "ours": len(sub_texts) / ours_s,
        "items": len(sub_texts),
        "note": f"raw on the first {len(probe):,} of the same texts",
    }


def result_stem(stages: list[str]) -> str:
    """``build`` for a run of every stage; a partial run is named by its stages, so it never passes for a
    complete one nor replaces its result files."""
    return "build" if set(stages) == set(STAGES) else "build-" + "-".join(s for s in STAGES if s in stages)


def write_results(result: dict, out_dir: Path, stem: str = "build") -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(result, indent=2, default=str))
    m = result["machine"]
    lines = [
        "# Index build throughput (OTT-QA)"
        + ("" if stem == "build" else f", stages {result['stages']} only"),
        "",
        f"Command: `{result['command']}`",
        "",
        f"Machine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu']}, Python {m['python']}; "
        f"load average {result['load_before']} before the run, {result['load_after']} after.",
    ]
    if "evidence" in result:
        lines.append(f"Evidence: {result['full_corpus_evidence']:,} rows ({result['evidence']}).")
    lines += [
        "",
        "| stage | raw engine | unit | raw | ours | ratio | items | note |",
        "|---|---|---|---:|---:|---:|---:|---|",
        *(
            f"| {r['stage']} | {r['engine']} | {r['unit']} | {r['raw']:,} | {r['ours']:,} | {r['ratio']} "
            f"| {r['items']:,} | {r['note']} |"
            for r in result["rows"]
        ),
    ]
    if "ann" in result:
        ann, cap = result["ann"], result["sequence_cap"]
        lines += [
            "",
            f"ANN (LanceDB) over {ann['vectors']:,} embedded evidence rows, {ann['queries']} dev questions: "
            f"recall@10 vs exact = **{ann['recall_at_10']}**, p50 {ann['p50_ms']} ms;",
            f"settings {ann['settings']}.",
            "",
            f"Sequence cap 128 vs the model's 256 on {cap['texts']:,} texts: {cap['cap128_s']} s vs "
            f"{cap['uncapped_s']} s; top-10 agreement with uncapped vectors on dev questions "
            f"{cap['top10_agreement']}.",
        ]
    if "graph" in result:
        lines += ["", f"Graph: nodes {result['graph']['nodes']}, edges {result['graph']['edges']}."]
        lines.append(f"Aliases: {result['aliases']}.")
    if "sizes_MB" in result:
        lines.append(f"Index sizes (MB): {result['sizes_MB']}.")
    path = out_dir / f"{stem}.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ottqa", type=Path, required=True, help="OTT-QA release folder (tables, passages, dev)"
    )
    parser.add_argument("--work", type=Path, default=REPO / ".state" / "bench-build")
    parser.add_argument("--embed-limit", type=int, default=20_000, help="evidence rows to embed (sample)")
    parser.add_argument("--raw-embed", type=int, default=3_000, help="texts for the raw and cap comparisons")
    parser.add_argument("--queries", type=int, default=500, help="dev questions used as ANN queries")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds of raw reads and verbalize")
    parser.add_argument("--wikidata-copies", type=int, default=5, help="Wikidata sample repeats")
    parser.add_argument("--reader-workers", type=int, default=2, help="processes of the two ingest readers")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument(
        "--stages",
        type=lambda text: text.split(","),
        default=list(STAGES),
        help=f"comma-separated stages to measure, of {','.join(STAGES)} (default: all); a partial run "
        "writes build-<stages>.md/.json, never build.md",
    )
    args = parser.parse_args()
    unknown = set(args.stages) - set(STAGES)
    if unknown:
        parser.error(f"unknown stages {sorted(unknown)}; known: {','.join(STAGES)}")
    args.work.mkdir(parents=True, exist_ok=True)
    before = load_average()
    result = run(args)
    result.update(stages=",".join(s for s in STAGES if s in args.stages), load_before=before,
                  load_after=load_average())  # fmt: skip
    print(f"results: {write_results(result, args.out, result_stem(args.stages))}")


def load_average() -> str:
    """``uptime``'s 1, 5 and 15 minute load: the machine is shared, so every figure says how busy it was."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
