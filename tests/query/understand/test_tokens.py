"""Question tokens with offsets, and the normalized content words relations are matched on."""

from __future__ import annotations

from query.understand.tokens import content_words, singular, tokenize


def test_tokens_keep_inner_punctuation():
    words = [t.text for t in tokenize("Bradford A.F.C , Jin Chao-chun , 9,566 fans ; 2009\u201310 ; O'Brien")]
    assert words == ["Bradford", "A.F.C", "Jin", "Chao-chun", "9,566", "fans", "2009\u201310", "O'Brien"]


def test_a_sentence_ends_at_a_period_but_not_after_an_abbreviation():
    tokens = tokenize("He met George Vaughn Jr. Smith. Then he left.")
    initial = {t.text for t in tokens if t.initial}
    assert initial == {"He", "Then"}  # "Smith" follows "Jr.", "Then" follows a full stop
    assert [t.kind for t in tokens[:3]] == ["cap", "word", "cap"]


def test_possessives_are_cut_off_the_name():
    tokens = tokenize("What was Aristotle's father called?")
    assert [t.text for t in tokens] == ["What", "was", "Aristotle", "father", "called"]
    assert tokens[2].end - tokens[2].start == len("Aristotle")


def test_content_words_are_normalized_without_function_words():
    # "population" and "belgium" carry the meaning; "what", "was", "the", "of", "in" are function words
    assert content_words("What was the population of Belgium in 2015?") == ["population", "belgium", "2015"]
    assert content_words("Who is he?") == []


def test_singular_by_rule():
    assert [singular(w) for w in ("cities", "players", "status", "class", "analysis", "bus")] == [
        "city",
        "player",
        "status",
        "class",
        "analysis",
        "bus",
    ]
