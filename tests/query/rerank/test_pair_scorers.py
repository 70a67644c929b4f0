"""Pair scorers: late interaction on the bundled MiniLM; cross-encoder mechanics on a tiny random model."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from query.rerank.pair_scorers import (
    EMPTY_TEXT_SCORE,
    PAIR_SCORERS,
    CrossEncoderScorer,
    CrossEncoderSettings,
    LateInteractionScorer,
    LateInteractionSettings,
    maxsim,
    open_pair_scorer,
    pair_scorer_settings,
    select_query_tokens,
)

QUESTION = "What is the capital of Belgium?"
BRUSSELS = "Brussels is the capital and largest city of Belgium."
NILE = "The Nile is a river in Africa."
PARIS = "Paris is the capital of France."
TEXTS = [NILE, PARIS, BRUSSELS]


@pytest.fixture(scope="module")
def late() -> LateInteractionScorer:
    return LateInteractionScorer()


class _CountingForward:
    """Wraps a scorer's model call to count how many texts reach the model."""

    def __init__(self, scorer: LateInteractionScorer, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts = 0
        real = scorer._forward

        def forward(ids):
            self.texts += len(ids)
            return real(ids)

        monkeypatch.setattr(scorer, "_forward", forward)


# --- late interaction, real model -------------------------------------------------------------


def test_relevant_passage_outranks_distractors(late: LateInteractionScorer) -> None:
    scores = late.score(QUESTION, TEXTS)
    assert scores.shape == (3,) and scores.dtype == np.float32
    assert scores[2] > scores[0] and scores[2] > scores[1]
    assert np.all(scores <= 1.0 + 1e-5) and np.all(scores >= -1.0 - 1e-5)


def test_scores_are_deterministic_across_instances() -> None:
    first = LateInteractionScorer(cache_size=0)
    second = LateInteractionScorer(cache_size=0)
    a = first.score(QUESTION, TEXTS)
    np.testing.assert_array_equal(a, first.score(QUESTION, TEXTS))
    np.testing.assert_array_equal(a, second.score(QUESTION, TEXTS))
    assert first.cache_len == 0


def test_scores_do_not_depend_on_order_or_company(late: LateInteractionScorer) -> None:
    scores = late.score(QUESTION, TEXTS)
    alone = LateInteractionScorer(cache_size=0).score(QUESTION, [BRUSSELS])
    np.testing.assert_allclose(alone[0], scores[2], atol=1e-5)
    reordered = LateInteractionScorer(cache_size=0).score(QUESTION, TEXTS[::-1])
    np.testing.assert_allclose(reordered[::-1], scores, atol=1e-5)


def test_cache_hit_gives_identical_scores_without_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = LateInteractionScorer(cache_size=10)
    cold = scorer.score(QUESTION, TEXTS)
    assert scorer.cache_len == 3
    counter = _CountingForward(scorer, monkeypatch)
    warm = scorer.score(QUESTION, TEXTS)
    np.testing.assert_array_equal(cold, warm)
    assert counter.texts == 1  # only the question


def test_duplicate_texts_are_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = LateInteractionScorer(cache_size=0)
    counter = _CountingForward(scorer, monkeypatch)
    scores = scorer.score(QUESTION, [BRUSSELS, NILE, BRUSSELS])
    assert counter.texts == 1 + 2
    assert scores[0] == scores[2]


def test_cache_is_bounded_and_least_recently_used_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = LateInteractionScorer(cache_size=2)
    scorer.score(QUESTION, TEXTS)
    assert scorer.cache_len == 2
    scorer.clear_cache()
    scorer.score(QUESTION, [NILE, PARIS])
    scorer.score(QUESTION, [NILE])  # touched: PARIS is now the least recently used
    scorer.score(QUESTION, [BRUSSELS])  # evicts PARIS
    counter = _CountingForward(scorer, monkeypatch)
    scorer.score(QUESTION, [NILE, BRUSSELS])
    assert counter.texts == 1  # only the question
    scorer.score(QUESTION, [PARIS])
    assert counter.texts == 1 + 2
    assert scorer.cache_len == 2


def test_empty_inputs(late: LateInteractionScorer) -> None:
    empty = late.score(QUESTION, [])
    assert empty.shape == (0,) and empty.dtype == np.float32
    scores = late.score(QUESTION, ["", BRUSSELS])
    assert scores[0] == EMPTY_TEXT_SCORE < scores[1]
    with pytest.raises(ValueError, match="no tokens"):
        late.score("", [BRUSSELS])


def test_concurrent_calls_agree(late: LateInteractionScorer) -> None:
    expected = LateInteractionScorer(cache_size=0).score(QUESTION, TEXTS)
    scorer = LateInteractionScorer(cache_size=1)  # tiny cache: threads evict each other's entries
    results: list[np.ndarray] = []

    def work() -> None:
        for _ in range(3):
            results.append(scorer.score(QUESTION, TEXTS))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 12
    for result in results:
        np.testing.assert_allclose(result, expected, atol=1e-5)


def test_the_tokenizer_shared_with_the_question_encoder_survives_two_threads(late) -> None:
    """Issue 17: the scorer's tokenizer is the one the dense question encoder uses (one model per process,
    ``index.embedder``), called at once from two threads with different truncation and padding. Older HF
    fast tokenizers failed there with "Already borrowed"; the installed ones must not, so no lock is
    added around them, and this test is what says so if an upgrade brings the failure back."""
    from index.embedder import Embedder, EmbedderSettings

    encoder = Embedder(EmbedderSettings(model=late.settings.model))
    assert encoder.model is late._embedder.model  # the case at issue: one tokenizer, two callers
    batch = [BRUSSELS * 12, NILE, PARIS * 30] * 8  # padded and truncated by the encoder
    want_vectors = encoder.model.encode(batch, batch_size=8)
    want_scores = LateInteractionScorer(cache_size=0).score(QUESTION, TEXTS)
    scorer = LateInteractionScorer(cache_size=0)  # every call tokenizes
    errors: list[BaseException] = []
    vectors: list[np.ndarray] = []
    scores: list[np.ndarray] = []

    def run(work, out) -> None:
        try:
            for _ in range(30):
                out.append(work())
        except BaseException as exc:  # the failure under test is any exception
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(lambda: encoder.model.encode(batch, batch_size=8), vectors)),
        threading.Thread(target=run, args=(lambda: scorer.score(QUESTION, TEXTS), scores)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(vectors) == len(scores) == 30
    for got in vectors:
        np.testing.assert_allclose(got, want_vectors, atol=1e-5)
    for got in scores:
        np.testing.assert_allclose(got, want_scores, atol=1e-5)


def test_query_token_selection() -> None:
    tokens = ["[CLS]", "what", "is", "the", "capital", "of", "belgium", "?", "[SEP]"]
    special = [1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert select_query_tokens(tokens, special) == [4, 6]
    assert select_query_tokens(tokens, special, skip=False) == list(range(1, 8))
    # the first piece of a split word stays, even when it spells a stopword
    assert select_query_tokens(["[CLS]", "a", "##zores", "[SEP]"], [1, 0, 0, 1]) == [1, 2]
    # nothing but stopwords: keep them rather than score with an empty query
    assert select_query_tokens(["[CLS]", "what", "is", "it", "[SEP]"], [1, 0, 0, 0, 1]) == [1, 2, 3]


def test_maxsim_by_hand() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    docs = [np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[0.0, 1.0]]), np.empty((0, 2))]
    np.testing.assert_allclose(maxsim(query, docs, chunk=1), [(1.0 + 0.8) / 2, (0.0 + 1.0) / 2, -1.0])


def test_late_interaction_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="max_doc_tokens=600 exceeds the 512 positions"):
        LateInteractionScorer(max_doc_tokens=600)
    with pytest.raises(ValueError, match="unknown embedding model"):
        LateInteractionScorer(model="no-such-model")
    with pytest.raises(ValueError, match="extra"):
        LateInteractionScorer(max_tokens=10)
    scorer = LateInteractionScorer(max_doc_tokens=64)
    assert scorer.to_dict()["name"] == "late-interaction" and scorer.to_dict()["max_doc_tokens"] == 64


# --- registry ------------------------------------------------------------------------------------


def test_registry() -> None:
    assert set(PAIR_SCORERS) == {"late-interaction", "cross-encoder"}
    scorer = open_pair_scorer(LateInteractionSettings(cache_size=5))
    assert isinstance(scorer, LateInteractionScorer) and scorer.settings.cache_size == 5
    with pytest.raises(ValueError, match=r"unknown pair scorer 'colbert'.*late-interaction"):
        pair_scorer_settings("colbert")


def test_stage_two_is_configured_by_typed_settings(tmp_path: Path) -> None:
    """``[rerank.stage2]`` is the scorer's own settings model, chosen by its name; a bare name is that
    scorer with its defaults; a key the scorer does not have is refused."""
    from query.rerank.settings import RerankSettings

    assert RerankSettings(stage2="late-interaction").stage2 == LateInteractionSettings()
    typed = RerankSettings(stage2={"name": "cross-encoder", "model_path": str(tmp_path), "max_length": 64})
    assert isinstance(typed.stage2, CrossEncoderSettings) and typed.stage2.max_length == 64
    with pytest.raises(ValueError, match="max_doc_tokens"):
        RerankSettings(stage2={"name": "late-interaction", "max_doc_tokens": "many"})
    with pytest.raises(ValueError, match="model_path"):
        RerankSettings(stage2={"name": "late-interaction", "model_path": str(tmp_path)})


# --- cross-encoder mechanics, tiny random model built here --------------------------------------

_WORDS = """what is the capital of belgium brussels and largest city nile a river in africa paris
france who wrote hamlet shakespeare play""".split()  # noqa: SIM905 - a word list reads better as words


def _tiny_cross_encoder(folder: Path, num_labels: int = 1):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "?", ",", "##s", *_WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizer.from_pretrained(str(folder))
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=num_labels,
    )
    torch.manual_seed(1234)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return tokenizer, model


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("cross") / "tiny-ce"
    tokenizer, model = _tiny_cross_encoder(folder)
    return folder, tokenizer, model


def test_cross_encoder_matches_direct_model_call(tiny_cross_encoder) -> None:
    import torch

    folder, tokenizer, model = tiny_cross_encoder
    scorer = CrossEncoderScorer(model_path=folder, max_length=32, batch_size=2)
    texts = [*TEXTS, "Shakespeare wrote the play Hamlet.", ""]
    scores = scorer.score(QUESTION, texts)
    assert scores.shape == (5,) and scores.dtype == np.float32
    np.testing.assert_array_equal(scores, scorer.score(QUESTION, texts))

    enc = tokenizer(
        [QUESTION] * len(texts), texts, padding=True, truncation=True, max_length=32, return_tensors="pt"
    )
    with torch.inference_mode():
        direct = model(**enc).logits.squeeze(-1).numpy()
    np.testing.assert_allclose(scores, direct, atol=1e-5)  # raw logits: no sigmoid on top
    assert scorer.score(QUESTION, []).shape == (0,)


def test_cross_encoder_truncates_to_max_length(tiny_cross_encoder) -> None:
    import torch

    folder, tokenizer, model = tiny_cross_encoder
    long_text = " ".join(_WORDS * 4)  # > 64 positions: would fail without truncation
    scores = CrossEncoderScorer(model_path=folder, max_length=16).score(QUESTION, [long_text])
    enc = tokenizer([QUESTION], [long_text], truncation=True, max_length=16, return_tensors="pt")
    assert enc["input_ids"].shape[1] == 16
    with torch.inference_mode():
        direct = model(**enc).logits.squeeze(-1).numpy()
    np.testing.assert_allclose(scores, direct, atol=1e-5)


def test_cross_encoder_through_registry(tiny_cross_encoder) -> None:
    folder, _, _ = tiny_cross_encoder
    scorer = open_pair_scorer(CrossEncoderSettings(model_path=folder, max_length=32))
    assert scorer.name == "cross-encoder"
    assert scorer.to_dict()["model_path"] == str(folder)


def test_cross_encoder_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist; set model_path"):
        CrossEncoderScorer(model_path=tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"has no config.json"):
        CrossEncoderScorer(model_path=tmp_path)
    with pytest.raises(ValueError, match="model_path"):
        pair_scorer_settings("cross-encoder")


def test_cross_encoder_with_several_labels_needs_score_label(tmp_path: Path) -> None:
    import torch

    folder = tmp_path / "two-labels"
    tokenizer, model = _tiny_cross_encoder(folder, num_labels=2)
    with pytest.raises(ValueError, match=r"2 labels.*score_label"):
        CrossEncoderScorer(model_path=folder)
    with pytest.raises(ValueError, match="only 2 label"):
        CrossEncoderScorer(model_path=folder, score_label=2)
    scores = CrossEncoderScorer(model_path=folder, score_label=1, max_length=32).score(QUESTION, TEXTS)
    enc = tokenizer([QUESTION] * 3, TEXTS, padding=True, truncation=True, max_length=32, return_tensors="pt")
    with torch.inference_mode():
        direct = model(**enc).logits[:, 1].numpy()
    np.testing.assert_allclose(scores, direct, atol=1e-5)
