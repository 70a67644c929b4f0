"""Text folding and search words: what every stage compares question and evidence words with."""

from __future__ import annotations

import unicodedata

import pytest

from query.text import fold, search_words


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Belgium", "belgium"),
        ("Zürich", "zurich"),
        ("Zu\u0308rich", "zurich"),  # already decomposed
        ("Ångström São Paulo", "angstrom sao paulo"),
        ("Łódź", "łodz"),  # Ł has no decomposition: lowercased, kept
        ("東京 Tōkyō", "東京 tokyo"),
    ],
)
def test_fold_lowercases_and_strips_accents(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_fold_agrees_with_the_per_character_definition() -> None:
    texts = ["Plain ASCII, 1,234 words.", "Dvořák, Brontë, Ærø", "naïve café", "Ελληνικά"]
    for text in texts:
        decomposed = unicodedata.normalize("NFKD", text)
        slow = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
        assert fold(text) == slow


def test_search_words_drop_stopwords_and_single_letters_but_keep_digits() -> None:
    assert search_words("What was the population of Belgium in 2015 , a 5 %?") == [
        "population",
        "belgium",
        "2015",
        "5",
    ]
