"""Passage windows for a whole batch at once: the sentence split in polars, only the packing in Python.

``windows`` (index.verbalize.text) splits one passage at a time with Python's ``re`` and ``str.split``;
on the OTT-QA passages that alone cost five times what reading the rows into Python does. Here the
work that touches every character runs in polars (Rust) and Python only packs sentence lengths into
windows. The result is exactly ``windows``' for every text: a passage this path cannot vouch for —
whitespace other than single spaces, a sentence longer than a window, the marker character in the
text — goes to ``windows`` itself.

Why single spaces make it simple: ``windows`` joins words with one space, so a passage whose only
whitespace is single spaces between words is already its own joined form; its words are its spaces
plus one, and the sentence ends ``windows`` splits at (``[.!?]``, whitespace, an optional opening
quote or bracket, then an ASCII capital or digit) are that pattern around one space.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import polars as pl

from index.verbalize.text import windows

# every character Python's str.split() splits on (Rust's \s lacks U+001C..U+001F), the space aside
OTHER_WHITESPACE = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() and c != " ")
OTHER_WHITESPACE_CLASS = (
    "[" + "".join(re.escape(c) if c.isprintable() else f"\\x{{{ord(c):x}}}" for c in OTHER_WHITESPACE) + "]"
)
MARK = "\x00"  # never in a text this path handles (checked)
SENTENCE_END = r"([.!?]) ([\"'(\[]?[A-Z0-9])"  # index.verbalize.text.SENTENCE_END, around a single space


def _simple(texts: pl.Expr) -> pl.Expr:
    """True where the text's only whitespace is single spaces between words, and no marker."""
    return ~texts.str.contains(f"{OTHER_WHITESPACE_CLASS}|  |^ | $|{MARK}")


WINDOWS = pl.List(pl.String)


def _greedy_windows(
    counts: np.ndarray, starts: np.ndarray, ends: np.ndarray, max_words: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy packing of whole sentences into windows of at most ``max_words`` words, for every passage
    at once: ``counts`` are the sentences' word counts, passage after passage, passage ``p`` holding
    sentences ``starts[p]:ends[p]`` (each at most ``max_words`` words). A window takes sentences while
    their words fit, which ``windows``' loop does one sentence at a time and this does one window per
    passage per step, with a binary search in the running word count. Returns (passage, first sentence,
    end sentence) of every window, passage by passage in order."""
    cumulative = np.concatenate([[0], np.cumsum(counts)])
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    passage = np.arange(len(starts))
    first, end = starts.copy(), ends.copy()
    while first.size:
        last = np.minimum(np.searchsorted(cumulative, cumulative[first] + max_words, side="right") - 1, end)
        found.append((passage, first, last))
        more = last < end
        passage, first, end = passage[more], last[more], end[more]
    if not found:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    passages, firsts, lasts = (np.concatenate(parts) for parts in zip(*found, strict=True))
    order = np.lexsort((firsts, passages))
    return passages[order], firsts[order], lasts[order]


def _long_windows(long: pl.DataFrame, max_words: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Windows of simple passages over ``max_words`` words: (i, windows) of those whose sentences all
    fit a window, and (i, text) of those with a longer sentence (for ``windows`` to cut)."""
    split = long.select(
        sentence=pl.col("text").str.replace_all(SENTENCE_END, f"${{1}}{MARK}${{2}}").str.split(MARK)
    )
    lengths = split.select(pl.col("sentence").list.len().cast(pl.Int64)).to_series().to_numpy()
    sentences = split.explode("sentence").select(
        chars=pl.col("sentence").str.len_chars().cast(pl.Int64),
        words=pl.col("sentence").str.count_matches(" ", literal=True).cast(pl.Int64) + 1,
    )
    ends = np.cumsum(lengths)
    starts = ends - lengths
    words = sentences["words"].to_numpy()
    longest = np.maximum.reduceat(words, starts) if len(starts) else np.empty(0, words.dtype)
    fits = longest <= max_words
    passages, firsts, lasts = _greedy_windows(words, starts[fits], ends[fits], max_words)
    # sentence k starts at char offsets[k] of the batch's joined texts: each sentence and one space
    offsets = np.concatenate([[0], np.cumsum(sentences["chars"].to_numpy() + 1)])
    owner = np.flatnonzero(fits)[passages]
    windows_ = (
        pl.DataFrame(
            {
                "row": owner,
                "offset": offsets[firsts] - offsets[starts[owner]],
                "length": offsets[lasts] - 1 - offsets[firsts],
            }
        )
        .join(
            long.with_row_index("row").select(pl.col("row").cast(pl.Int64), "i", "text"),
            on="row",
            how="left",
            maintain_order="left",
        )
        .group_by("i", maintain_order=True)
        .agg(windows=pl.col("text").str.slice(pl.col("offset"), pl.col("length")))
    )
    return windows_, long.filter(pl.Series(~fits)).select("i", "text")


def batch_windows(texts: pl.Series, max_words: int) -> pl.Series:
    """``[windows(t, max_words) for t in texts]`` as a list column, computed batch-wise."""
    frame = (
        pl.DataFrame({"text": texts})
        .with_row_index("i")
        .with_columns(
            simple=_simple(pl.col("text")),
            words=pl.when(pl.col("text").str.len_bytes() > 0)
            .then(pl.col("text").str.count_matches(" ", literal=True) + 1)
            .otherwise(0),
        )
    )
    short = frame.filter(pl.col("simple") & (pl.col("words") <= max_words)).select(
        "i", windows=pl.when(pl.col("words") > 0).then(pl.concat_list("text")).otherwise(pl.lit([], WINDOWS))
    )
    packed, cut = _long_windows(
        frame.filter(pl.col("simple") & (pl.col("words") > max_words)).select("i", "text"), max_words
    )
    slow = pl.concat([frame.filter(~pl.col("simple")).select("i", "text"), cut])
    slow_windows = pl.Series([windows(t, max_words) for t in slow["text"].to_list()], dtype=WINDOWS)
    parts = [short, packed, slow.select("i", windows=slow_windows)]
    return pl.concat([p.with_columns(pl.col("windows").cast(WINDOWS)) for p in parts]).sort("i")["windows"]
