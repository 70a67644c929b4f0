"""Model-based pair scorers for re-ranking: one question against a list of evidence texts.

No cross-encoder ships in a registry package, so the default scorer is late interaction
(ColBERT-style MaxSim) over the token vectors of the bundled all-MiniLM-L6-v2: every kept question
token finds its most similar token in a text, and the text's score is the mean of those maxima. The
model was trained for pooled sentence vectors, not for MaxSim, so this is a zero-shot signal to fuse
with others, not a trained reranker. A cross-encoder sits behind the same ``PairScorer`` interface
for users who have one on disk; nothing is ever downloaded.

Re-ranking sees the same evidence again and again across questions, so the late-interaction doc
encodings are kept in an LRU cache keyed by a hash of the text. They are stored as float16 (half the
memory, cosine error ~1e-4) and scored from that stored form whether fresh or cached, so a cache hit
gives exactly the score a cold call gives.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import unicodedata
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from index.embedder import MODELS, Embedder, EmbedderSettings
from query.lexicon import MAXSIM_STOPWORDS
from query.registry import Registry

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

log = logging.getLogger(__name__)

# Score of a text with no tokens at all: below any real cosine maximum, so it ranks last.
EMPTY_TEXT_SCORE = -1.0

_SettingsT = TypeVar("_SettingsT", bound=BaseModel)


class PairScorer(Protocol):
    """Scores texts against a question: float32, one score per text, higher = more relevant."""

    name: str

    def score(self, question: str, texts: list[str]) -> np.ndarray: ...


def _merge_settings(
    cls: type[_SettingsT], settings: _SettingsT | None, overrides: dict[str, Any]
) -> _SettingsT:
    """Settings object < keyword overrides, validated together (unknown keys are a ValueError)."""
    base = settings.model_dump() if settings is not None else {}
    return cls.model_validate({**base, **overrides})


class LateInteractionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["late-interaction"] = "late-interaction"
    model: str = Field("all-MiniLM-L6-v2", description=f"token-vector model, one of {sorted(MODELS)}")
    max_doc_tokens: int = Field(128, ge=3, description="token cap per text, [CLS] and [SEP] included")
    max_query_tokens: int = Field(64, ge=3, description="token cap per question, [CLS] and [SEP] included")
    batch_size: int = Field(32, gt=0)
    cache_size: int = Field(5000, ge=0, description="doc encodings kept (LRU, ~80 KB each); 0 = no cache")
    skip_query_tokens: bool = Field(
        True, description="drop punctuation and MAXSIM_STOPWORDS from the question"
    )


def _is_punctuation(token: str) -> bool:
    return all(unicodedata.category(ch).startswith("P") for ch in token)


def select_query_tokens(tokens: list[str], special: list[int], skip: bool = True) -> list[int]:
    """Positions of the question tokens that take part in MaxSim.

    Special tokens always go; with ``skip``, punctuation and whole-word stopwords go too (the first
    piece of a split word is never a stopword: "a ##zores" keeps "a"). If nothing would be left, the
    non-special tokens are kept, so "What is it?" still has a query.
    """
    content = [i for i, flag in enumerate(special) if not flag]
    if not skip:
        return content
    kept = []
    for i in content:
        token = tokens[i]
        whole_word = not token.startswith("##") and not (
            i + 1 < len(tokens) and tokens[i + 1].startswith("##")
        )
        if _is_punctuation(token) or (whole_word and token in MAXSIM_STOPWORDS):
            continue
        kept.append(i)
    return kept or content


def _text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class LateInteractionScorer:
    """MaxSim over L2-normalized MiniLM token vectors; the model is shared with the ``Embedder``."""

    name: ClassVar[str] = "late-interaction"

    def __init__(self, settings: LateInteractionSettings | None = None, **overrides: Any) -> None:
        self.settings = _merge_settings(LateInteractionSettings, settings, overrides)
        self._embedder = Embedder(EmbedderSettings(model=self.settings.model))
        config = json.loads((self._embedder.path / "config.json").read_text())
        positions = config["max_position_embeddings"]
        for field in ("max_doc_tokens", "max_query_tokens"):
            if getattr(self.settings, field) > positions:
                raise ValueError(
                    f"{field}={getattr(self.settings, field)} exceeds the {positions} positions of "
                    f"{self.settings.model}; use at most {positions}"
                )
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings.model_dump(mode="json")}

    @property
    def cache_len(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    def score(self, question: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty(0, dtype=np.float32)
        with self._lock:
            query = self._encode_query(question)
            docs = self._doc_vectors(texts)
        return maxsim(query, docs)

    def _encode_query(self, question: str) -> np.ndarray:
        tokenizer = self._embedder.model.tokenizer
        enc = tokenizer(
            [question],
            truncation=True,
            max_length=self.settings.max_query_tokens,
            return_special_tokens_mask=True,
        )
        ids, special = enc["input_ids"][0], enc["special_tokens_mask"][0]
        keep = select_query_tokens(
            tokenizer.convert_ids_to_tokens(ids), special, self.settings.skip_query_tokens
        )
        if not keep:
            raise ValueError(f"question {question!r} has no tokens to score with; pass a non-empty question")
        return self._forward([ids])[0][keep]

    def _doc_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Token vectors (float16, special tokens dropped) per text, from the cache or the model."""
        keys = [_text_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in self._cache:
                self._cache.move_to_end(key)
                found[key] = self._cache[key]
            else:
                missing[key] = text  # a repeated text is encoded once
        if missing:
            enc = self._embedder.model.tokenizer(
                list(missing.values()),
                truncation=True,
                max_length=self.settings.max_doc_tokens,
                return_special_tokens_mask=True,
            )
            vectors = self._forward(enc["input_ids"])
            for key, vecs, special in zip(missing, vectors, enc["special_tokens_mask"], strict=True):
                found[key] = vecs[np.asarray(special) == 0].astype(np.float16)
                self._remember(key, found[key])
        return [found[key] for key in keys]

    def _remember(self, key: bytes, vectors: np.ndarray) -> None:
        if self.settings.cache_size == 0:
            return
        self._cache[key] = vectors
        while len(self._cache) > self.settings.cache_size:
            self._cache.popitem(last=False)

    def _forward(self, ids: list[list[int]]) -> list[np.ndarray]:
        """L2-normalized float32 vectors of every token of each tokenized text, batched by length."""
        import torch

        model = self._embedder.model
        transformer = model[0].auto_model
        pad = model.tokenizer.pad_token_id
        out: list[np.ndarray] = [np.empty(0)] * len(ids)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # each batch pads to its own longest
        step = self.settings.batch_size
        for start in range(0, len(order), step):
            batch = order[start : start + step]
            width = len(ids[batch[0]])
            input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = torch.tensor(ids[i])
                mask[row, : len(ids[i])] = 1
            with torch.inference_mode():
                hidden = transformer(
                    input_ids=input_ids, attention_mask=mask, token_type_ids=torch.zeros_like(input_ids)
                ).last_hidden_state
                hidden = torch.nn.functional.normalize(hidden, dim=-1).numpy()
            for row, i in enumerate(batch):
                out[i] = hidden[row, : len(ids[i])].copy()
        return out


def maxsim(query: np.ndarray, docs: list[np.ndarray], chunk: int = 256) -> np.ndarray:
    """Mean over query tokens of the best cosine over each doc's tokens (all vectors unit length).

    Docs go through in chunks so a pool of 1000 long texts never becomes one huge matrix.
    """
    scores = np.full(len(docs), EMPTY_TEXT_SCORE, dtype=np.float32)
    nonempty = [i for i, d in enumerate(docs) if len(d)]
    query = query.astype(np.float32, copy=False)
    for start in range(0, len(nonempty), chunk):
        part = nonempty[start : start + chunk]
        matrix = np.concatenate([docs[i] for i in part]).astype(np.float32)
        offsets = np.cumsum([0] + [len(docs[i]) for i in part[:-1]])
        best = np.maximum.reduceat(query @ matrix.T, offsets, axis=1)  # (query tokens, docs)
        scores[part] = best.mean(axis=0)
    return scores


class CrossEncoderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["cross-encoder"] = "cross-encoder"
    model_path: Path = Field(description="local folder saved with save_pretrained; nothing is downloaded")
    max_length: int = Field(256, gt=0, description="token cap per (question, text) pair")
    batch_size: int = Field(32, gt=0)
    score_label: int | None = Field(
        None, ge=0, description="which logit is the relevance score; required if the model has several labels"
    )


class CrossEncoderScorer:
    """Raw logits of a ``sentence_transformers.CrossEncoder`` (no sigmoid: order is all that matters)."""

    name: ClassVar[str] = "cross-encoder"

    def __init__(self, settings: CrossEncoderSettings | None = None, **overrides: Any) -> None:
        self.settings = _merge_settings(CrossEncoderSettings, settings, overrides)
        path = self.settings.model_path.expanduser()
        if not (path / "config.json").is_file():
            what = "has no config.json" if path.is_dir() else "does not exist"
            raise FileNotFoundError(
                f"cross-encoder folder {path} {what}; set model_path to a local folder written by "
                "save_pretrained (config.json, weights, tokenizer files) - models are never downloaded"
            )
        self._model = self._load(path)
        labels = self._model.num_labels
        label = self.settings.score_label
        if labels > 1 and label is None:
            raise ValueError(
                f"cross-encoder {path} has {labels} labels {self._model.config.id2label}; "
                "set score_label to the index of the relevance logit"
            )
        if label is not None and label >= labels:
            raise ValueError(f"score_label={label} but cross-encoder {path} has only {labels} label(s)")
        self._lock = threading.Lock()

    def _load(self, path: Path) -> CrossEncoder:
        import torch
        from sentence_transformers import CrossEncoder  # slow import: only when used

        log.info("loading cross-encoder from %s", path)
        return CrossEncoder(
            str(path),
            device="cpu",
            max_length=self.settings.max_length,
            local_files_only=True,
            activation_fn=torch.nn.Identity(),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings.model_dump(mode="json")}

    def score(self, question: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty(0, dtype=np.float32)
        import torch

        with self._lock:
            raw = self._model.predict(
                [(question, text) for text in texts],
                batch_size=self.settings.batch_size,
                show_progress_bar=False,
                activation_fn=torch.nn.Identity(),
                convert_to_numpy=True,
            )
        raw = np.asarray(raw, dtype=np.float32)
        if raw.ndim == 2:
            raw = raw[:, self.settings.score_label or 0]
        return raw


PairScorerSettings = Annotated[LateInteractionSettings | CrossEncoderSettings, Field(discriminator="name")]
"""A pair scorer's settings, typed by its ``name`` (``[rerank.stage2]`` in an engine config)."""

PAIR_SCORERS: Registry[Any, PairScorer] = Registry(
    "pair scorer",
    {LateInteractionScorer.name: LateInteractionScorer, CrossEncoderScorer.name: CrossEncoderScorer},
)
"""Pair scorers by name, each built from its settings model; a new scorer registers here."""


def pair_scorer_settings(name: str) -> LateInteractionSettings | CrossEncoderSettings:
    """The default settings of the scorer ``name`` (a cross-encoder has none: it needs its model's folder)."""
    PAIR_SCORERS.check(name)
    return TypeAdapter(PairScorerSettings).validate_python({"name": name})


def open_pair_scorer(settings: LateInteractionSettings | CrossEncoderSettings) -> PairScorer:
    """The scorer its settings name, built from them."""
    return PAIR_SCORERS.create(settings.name, settings)
