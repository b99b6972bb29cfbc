"""The limits that keep every read answer small, and the check that enforces them."""

from __future__ import annotations

MAX_LIST_LIMIT = 50  # ~500 characters per run: a full page stays near 6k tokens
MAX_POINTS_PER_SERIES = 1000
MAX_POINTS_TOTAL = 2000
MAX_NON_FINITE_LISTED = 20
MAX_LOG_LINES = 200
MAX_LOG_LINE_CHARS = 400
MAX_LOG_CHARS = 40_000  # ~10k tokens, whatever limit is asked
MAX_COMPARE = 10


def check_limit(name: str, value: int, maximum: int, minimum: int = 1) -> int:
    """Validate a count argument with a message that says the allowed range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer between {minimum} and {maximum}, got {value!r}")
    if value < minimum or value > maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value
