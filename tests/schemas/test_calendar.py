"""Month names, checked against Python's own calendar (English in the C locale the tests run in)."""

from __future__ import annotations

import calendar

from schemas.calendar import MONTH_NAMES, MONTH_NUMBERS


def test_month_names_are_the_calendars_in_order():
    assert list(MONTH_NAMES) == [calendar.month_name[i] for i in range(1, 13)]


def test_month_numbers_read_full_names_three_letters_and_sept():
    for number in range(1, 13):
        assert MONTH_NUMBERS[calendar.month_name[number].lower()] == number
        assert MONTH_NUMBERS[calendar.month_abbr[number].lower()] == number
    assert MONTH_NUMBERS["sept"] == 9
    assert len(MONTH_NUMBERS) == 12 + 11 + 1  # "may" is its own abbreviation
