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

# metrics.csv. The trainer writes fewer than 50 columns (PPO: 25 + the common 21) and an import adds
# only the source's own scalar tags; 256 keeps get_run_metrics(catalog=true) near 10k tokens, and a header of
# 100k columns is refused before a row is parsed (issue 26: 10k columns cost 10 s of CPU per read).
MAX_METRIC_COLUMNS = 256
# The longest line of metrics.csv: 256 names of up to 250 characters; a row of 256 full-precision floats
# is ~6 KB. A longer header, or a longer unfinished last line, is damage, not a row still being written.
MAX_METRICS_LINE_BYTES = 64 * 1024


def check_limit(name: str, value: int, maximum: int, minimum: int = 1) -> int:
    """Validate a count argument with a message that says the allowed range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer between {minimum} and {maximum}, got {value!r}")
    if value < minimum or value > maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value
