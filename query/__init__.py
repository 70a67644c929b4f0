"""query package."""
