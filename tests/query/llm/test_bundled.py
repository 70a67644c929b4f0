"""Bundled models: assembled once from their part packages, checksum-checked, clear about what is missing.

The mechanics run on small part packages written by the test (importable folders with ``data/partNN``);
one test assembles the real 0.5B model from its registry packages and checks the published checksum.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from query.llm.bundled import BUNDLED_MODELS, FAST_MODEL, BundledModel, ModelInstallError, model_path


def _packages(root: Path, prefix: str, chunks: list[bytes]) -> tuple[tuple[str, str], ...]:
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        parts.append((package.name, f"data/part{i:02d}.bin"))
    return tuple(parts)


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[BundledModel, bytes]:
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"second part" * 999, b"tail"]
    whole = b"".join(chunks)
    parts = _packages(tmp_path / "site", "hqa_tiny", chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = BundledModel(
        name="tiny",
        file_name="tiny.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
        chat=True,
        parts=parts,
        distributions=tuple(f"hqa-tiny-part{i}==1" for i in range(1, 4)),
        provenance="test",
        licence="test",
    )
    monkeypatch.setitem(BUNDLED_MODELS, "tiny", model)
    return model, whole


def test_parts_are_concatenated_in_order_once(tiny, tmp_path: Path) -> None:
    _, whole = tiny
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(2) as pool:  # two assemblers racing into one folder, as two processes would
        paths = list(pool.map(lambda _: model_path("tiny", cache), range(2)))
    assert paths[0] == paths[1] == cache / "tiny.gguf"
    assert paths[0].read_bytes() == whole
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]
    mtime = paths[0].stat().st_mtime_ns
    assert model_path("tiny", cache).stat().st_mtime_ns == mtime  # reused, not written again


def test_a_damaged_cached_model_is_assembled_again(tiny, tmp_path: Path) -> None:
    _, whole = tiny
    path = model_path("tiny", tmp_path)
    path.write_bytes(whole[:100])  # cut, as a full disk would leave it
    assert model_path("tiny", tmp_path).read_bytes() == whole


def test_a_missing_part_names_the_package_to_install(tiny, tmp_path: Path) -> None:
    model, _ = tiny
    broken = BundledModel(
        **{**model.__dict__, "parts": (*model.parts[:2], ("hqa_not_installed_part3", "data/part03.bin"))}
    )
    with pytest.raises(
        ModelInstallError, match=r"1 of its 3 part packages are missing \(hqa-tiny-part3==1\)"
    ) as raised:
        broken.part_paths()
    assert f"-e '.[{model.extra}]'" in str(raised.value)


def test_each_bundled_models_parts_are_in_the_extra_its_error_names() -> None:
    """`make demo` installs only the default model's extra; a missing model's error must name the
    extra of pyproject.toml that really holds its part packages."""
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    for model in BUNDLED_MODELS.values():
        assert set(model.distributions) <= set(extras[model.extra]), model.name
    assert BUNDLED_MODELS["qwen2.5-coder-1.5b-instruct"].extra == "models"


def test_a_checksum_mismatch_is_an_error_and_leaves_no_file(
    tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = tiny
    monkeypatch.setitem(BUNDLED_MODELS, "tiny", BundledModel(**{**model.__dict__, "sha256": "0" * 64}))
    cache = tmp_path / "cache"
    with pytest.raises(ModelInstallError, match=r"expected 0000.*reinstall"):
        model_path("tiny", cache)
    assert list(cache.iterdir()) == []


def test_unknown_model_name() -> None:
    with pytest.raises(
        ModelInstallError, match=r"unknown bundled model 'gpt-9'.*qwen2\.5-coder-1\.5b-instruct"
    ):
        model_path("gpt-9", Path("/nonexistent"))


def test_the_real_fast_model_matches_its_published_checksum(model_cache: Path) -> None:
    path = model_path(FAST_MODEL, model_cache)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            digest.update(chunk)
    assert digest.hexdigest() == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert path.read_bytes()[:4] == b"GGUF"


def test_every_bundled_model_is_installed() -> None:
    """The README's setup installs every part package of every bundled model."""
    for model in BUNDLED_MODELS.values():
        assert len(model.part_paths()) == len(model.parts)
