"""Third room: the pool re-ranked 1000 → 100 (stage one, a linear model over features) → 30 (stage two,
an optional pair scorer)."""
