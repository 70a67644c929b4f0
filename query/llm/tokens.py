"""What llama.cpp's logits processor sees of a generation: each picked token's log-probability (the
reader's confidence) and, for a listener (``query.events``), its text as soon as it is generated."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from query.events import emit


@dataclass
class LogprobRecorder:
    """A llama.cpp logits processor that keeps the log-probability of each token the sampler picked.

    Called once per generated token with the logits in token-id order; the token picked from the
    previous call's logits is the last of ``input_ids`` by then, so each call settles the one before.
    """

    picked: list[tuple[int, float]] = field(default_factory=list)
    on_token: Callable[[int], None] | None = None
    _previous: np.ndarray | None = None
    _lse: float = 0.0

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self._previous is not None:
            token = int(input_ids[-1])
            self.picked.append((token, float(self._previous[token] - self._lse)))
            if self.on_token is not None:
                self.on_token(token)
        self._previous = np.array(logits, dtype=np.float64, copy=True)
        top = float(self._previous.max())
        self._lse = top + float(np.log(np.exp(self._previous - top).sum()))
        return logits


class TokenTeller:
    """Each generated token's text as a ``token`` event once its bytes make whole characters (a token can
    end inside a multi-byte character). The last token is never settled by the logits processor (no call
    follows it), so ``finish`` tells what the completion's text has beyond what was told."""

    def __init__(self, detokenize: Callable[[list[int]], bytes]) -> None:
        self.detokenize = detokenize
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.told = ""

    def __call__(self, token: int) -> None:
        piece = self.decoder.decode(self.detokenize([token]))
        if piece:
            self.told += piece
            emit("token", {"text": piece})

    def finish(self, text: str) -> None:
        if text.startswith(self.told) and len(text) > len(self.told):
            emit("token", {"text": text[len(self.told) :]})
