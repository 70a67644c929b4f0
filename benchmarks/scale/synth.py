"""A deterministic synthetic corpus at any size: Wikidata and Wikipedia dumps grown from the samples.

    python benchmarks/scale/synth.py --entities 1000000 --pages 100000 --out DIR [--seed 1] [--plain]

Writes ``DIR/wikidata-synth-all.json.bz2`` (the ``latest-all.json`` layout of the sample: ``[``, one
item a line ending in ``,``, ``]``), ``DIR/enwiki-synth-pages-articles.xml.bz2`` (MediaWiki export
0.10, like the sample) and ``DIR/synth.json``: what was asked, what was written (counts, statement
spread, bytes, SHA-256) and what it cost. Items and pages are renamed copies of the sample's, at a
real dump's spread of sizes (``synth_spread.py`` says which and why); names and ids in
``synth_names.py``, the copiers in ``synth_wikidata.py`` and ``synth_wikipedia.py``.

Same arguments, same bytes: random draws are seeded per chunk of the output, and chunks are fixed
slices of the corpus, so the worker count changes only the speed. Each chunk is compressed as its
own bz2 stream (a multistream file, as Wikimedia publishes them), in parallel, and written in
order, so memory stays at a few chunks whatever the size.
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import logging
import multiprocessing
import resource
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

from pydantic import BaseModel, Field  # noqa: E402
from synth_spread import SizeSpread  # noqa: E402
from synth_wikidata import ItemCounts, load_item_templates, render_items  # noqa: E402
from synth_wikipedia import PageCounts, load_page_templates, render_pages  # noqa: E402

from ingest.progress import progress  # noqa: E402

log = logging.getLogger("synth")

GENERATOR_VERSION = 1
"""Bump when the same arguments would write different bytes: cached corpora are then made again."""
WIKIDATA_SAMPLE = REPO / "data" / "samples" / "wikidata" / "wikidata-sample-items.json.bz2"
WIKIPEDIA_SAMPLE = REPO / "data" / "samples" / "wikipedia" / "enwiki-2016-sample-pages-articles.xml.bz2"
ITEM_CHUNK = 2_000
PAGE_CHUNK = 200
WIKIDATA_NAME = "wikidata-synth-all.json"
WIKIPEDIA_NAME = "enwiki-synth-pages-articles.xml"
MANIFEST = "synth.json"


class CorpusSpec(BaseModel):
    """Everything the bytes of a corpus depend on."""

    entities: int = Field(ge=1)
    pages: int = Field(ge=1)
    seed: int = 1
    compression: Literal["bz2", "none"] = "bz2"
    bz2_level: int = Field(9, ge=1, le=9)
    spread: SizeSpread = Field(default_factory=SizeSpread)
    generator_version: int = GENERATOR_VERSION

    def file_names(self) -> tuple[str, str]:
        ext = ".bz2" if self.compression == "bz2" else ""
        return WIKIDATA_NAME + ext, WIKIPEDIA_NAME + ext

    def folder_name(self) -> str:
        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:8]
        return f"e{self.entities}-p{self.pages}-s{self.seed}-{digest}"


class FileInfo(BaseModel):
    bytes: int
    sha256: str


class CorpusManifest(BaseModel):
    spec: CorpusSpec
    files: dict[str, FileInfo]
    items: dict[str, Any]
    pages: dict[str, Any]
    seconds: float
    peak_rss_mb: float = Field(
        description="largest of this process and its workers (the generator's own when run as a script)"
    )


# Set in the parent and, by the pool's initializer, in every spawned worker: spec and samples.
_SHARED: dict[str, Any] = {}


def _chunk(kind: str, start: int, count: int) -> tuple[bytes, ItemCounts | PageCounts]:
    spec: CorpusSpec = _SHARED["spec"]
    if kind == "items":
        data, counts = render_items(_SHARED["items"], start, count, spec.spread, spec.seed)
    else:
        data, counts = render_pages(_SHARED["pages"], start, count, spec.spread, spec.seed)
    return _compress(data, spec), counts


def _compress(data: bytes, spec: CorpusSpec) -> bytes:
    return bz2.compress(data, spec.bz2_level) if spec.compression == "bz2" else data


def _in_order(pool: Any, kind: str, total: int, size: int, window: int) -> Iterator[tuple[bytes, Any]]:
    """Chunk results in corpus order, at most ``window`` chunks in flight (bounded memory)."""
    pending: deque = deque()
    for start in range(0, total, size):
        pending.append(pool.apply_async(_chunk, (kind, start, min(size, total - start))))
        if len(pending) >= window:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


def _write(path: Path, parts: Iterator[bytes]) -> FileInfo:
    """Write ``parts`` to ``path`` atomically (a ``.partial`` file renamed at the end), hashing as it goes."""
    digest, size = hashlib.sha256(), 0
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as f:
        for part in parts:
            digest.update(part)
            size += len(part)
            f.write(part)
    partial.replace(path)
    return FileInfo(bytes=size, sha256=digest.hexdigest())


def _stream(
    spec: CorpusSpec, pool: Any, window: int, kind: str, head: str, foot: str, add: Callable
) -> Iterator[bytes]:
    """The bytes of one dump: its head, every chunk of ``kind`` in order, its foot."""
    total, size = (spec.entities, ITEM_CHUNK) if kind == "items" else (spec.pages, PAGE_CHUNK)
    bar = progress(f"synth {kind}", total=total, unit=f" {kind}")
    yield _compress(head.encode("utf-8"), spec)
    for data, counts in _in_order(pool, kind, total, size, window):
        add(counts)
        bar.update(counts.items if kind == "items" else counts.pages)
        yield data
    yield _compress(foot.encode("utf-8"), spec)
    bar.close()


def _median(hist: dict[int, int], total: int) -> float:
    """The median of the values a histogram counts (the mean of the middle two for an even count)."""
    middle, seen, low = [(total - 1) // 2, total // 2], 0, None
    for value in sorted(hist):
        seen += hist[value]
        if low is None and seen > middle[0]:
            low = value
        if seen > middle[1]:
            return (low + value) / 2
    raise ValueError("empty histogram")


def _item_summary(counts: ItemCounts) -> dict[str, Any]:
    hist = counts.histogram or {}
    values = sorted(hist)
    share = {
        f"share_over_{n}": round(sum(c for v, c in hist.items() if v > n) / counts.items, 5)
        for n in (20, 100)
    }
    return {
        "items": counts.items,
        "whole_copies": counts.whole,
        "statements": counts.statements,
        "statements_mean": round(counts.statements / counts.items, 3),
        "statements_median": _median(hist, counts.items),
        "statements_max": values[-1],
        **share,
        "histogram": {str(k): hist[k] for k in values},
    }


def _load_shared(spec: CorpusSpec) -> None:
    """What every chunk renders from: the spec and the sample's item and page templates."""
    _SHARED.update(
        spec=spec, items=load_item_templates(WIKIDATA_SAMPLE), pages=load_page_templates(WIKIPEDIA_SAMPLE)
    )


def generate(spec: CorpusSpec, out_dir: Path, workers: int = 2) -> CorpusManifest:
    """Write the corpus of ``spec`` into ``out_dir`` (its manifest last, so a cut run is not reused)."""
    started = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    _load_shared(spec)
    items, pages = ItemCounts(histogram={}), PageCounts()
    wikidata_name, wikipedia_name = spec.file_names()
    dump = _SHARED["pages"]
    window = 2 * workers + 2
    # spawned, not forked: a fork of a process with other threads (a test session's servers, a model) can
    # inherit a lock one of them held and hang; each worker loads the small templates itself instead
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(workers, initializer=_load_shared, initargs=(spec,)) as pool:
        files = {
            wikidata_name: _write(
                out_dir / wikidata_name,
                _stream(spec, pool, window, "items", "[\n", "]\n", items.add),
            ),
            wikipedia_name: _write(
                out_dir / wikipedia_name,
                _stream(spec, pool, window, "pages", dump.header, dump.footer, pages.add),
            ),
        }
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    manifest = CorpusManifest(
        spec=spec,
        files=files,
        items=_item_summary(items),
        pages={**pages.__dict__, "template_pages": len(dump.pages)},
        seconds=round(time.perf_counter() - started, 1),
        peak_rss_mb=round(peak / 1024, 1),
    )
    (out_dir / MANIFEST).write_text(manifest.model_dump_json(indent=2))
    return manifest


def complete_manifest(spec: CorpusSpec, folder: Path) -> CorpusManifest | None:
    """The manifest of the corpus of ``spec`` in ``folder`` when it is complete there, else None."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    manifest = CorpusManifest.model_validate_json(path.read_text())
    files = manifest.files.items()
    intact = all((folder / n).is_file() and (folder / n).stat().st_size == f.bytes for n, f in files)
    return manifest if manifest.spec == spec and intact else None


def cached_corpus(spec: CorpusSpec, root: Path, workers: int = 2) -> tuple[Path, CorpusManifest]:
    """The corpus of ``spec`` under ``root``, generated only when no complete copy is there."""
    folder = root / spec.folder_name()
    manifest = complete_manifest(spec, folder)
    if manifest is not None:
        log.info("corpus %s already generated: reused", folder)
        return folder, manifest
    return folder, generate(spec, folder, workers)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, required=True, help="Wikidata items to write")
    parser.add_argument("--pages", type=int, required=True, help="Wikipedia pages to write (redirects count)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the two dumps and synth.json")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="write uncompressed dumps instead of bz2")
    parser.add_argument("--bz2-level", type=int, default=9, help="bz2 block size, 1-9 (dumps use 9)")
    parser.add_argument("--workers", type=int, default=2, help="processes rendering and compressing chunks")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = parse_args(argv)
    spec = CorpusSpec(
        entities=args.entities,
        pages=args.pages,
        seed=args.seed,
        compression="none" if args.plain else "bz2",
        bz2_level=args.bz2_level,
    )
    manifest = generate(spec, args.out, args.workers)
    items = manifest.items
    log.info(
        "%d items (%d statements, median %s, mean %.1f) and %d pages (%d redirects) in %s, %.0f s",
        items["items"], items["statements"], items["statements_median"], items["statements_mean"],
        manifest.pages["pages"], manifest.pages["redirects"], args.out, manifest.seconds,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
