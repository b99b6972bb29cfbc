"""The tail of a run's log, filtered by level or text."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import read_run_file
from gymnasium_solver.run_store.limits import MAX_LOG_CHARS, MAX_LOG_LINE_CHARS, MAX_LOG_LINES, check_limit


class LogTail(BaseModel):
    run_id: str
    lines: list[str] = Field(description="oldest first; long lines are cut at 400 characters")
    matched_lines_scanned: int = Field(description="matching lines found in the scanned part of the log")
    log_bytes: int
    scanned_bytes: int = Field(description="bytes read from the end of run.log")
    note: str = ""


_LOG_LEVELS = tuple(str(lv) for lv in rf.LogLevel)  # lowest first
_LOG_SCAN_BYTES = 4 * 1024 * 1024


def tail_log(run_dir: Path, limit: int = 50, level: str | None = None, contains: str | None = None) -> LogTail:
    """The last ``limit`` lines of run.log, optionally only lines at ``level`` or above, or containing text.

    Reads at most the last 4 MiB, so it is fast on any log size. Traceback lines count as ERROR.
    """
    check_limit("limit", limit, MAX_LOG_LINES)
    min_rank = 0
    if level is not None:
        lvl = level.upper()
        if lvl not in _LOG_LEVELS:
            raise ValueError(f"unknown level {level!r}; use one of {', '.join(_LOG_LEVELS)}")
        min_rank = _LOG_LEVELS.index(lvl)
    got = read_run_file(run_dir, rf.RUN_LOG, last=_LOG_SCAN_BYTES, missing="this run has no log")
    size, start = got.size, got.offset
    text = got.data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    # The first line is probably cut in half; when it is the only one, the log ends with a line
    # longer than what is scanned, and its end is what there is to show (issue 26: a 200 MB line
    # was reported as "the log is empty").
    over_long = start > 0 and len(lines) == 1
    if over_long:
        lines = ["[...] " + lines[0][6 - MAX_LOG_LINE_CHARS:]]  # 400 characters with the mark
    elif start > 0 and lines:
        lines = lines[1:]

    def rank(line: str) -> int:
        for i in range(len(_LOG_LEVELS) - 1, -1, -1):
            if _LOG_LEVELS[i] in line:
                return i
        return 3 if line.startswith(("Traceback", "  File ", "    ")) else 1

    keep = [ln for ln in lines if (level is None or rank(ln) >= min_rank) and (contains is None or contains in ln)]
    out = [ln if len(ln) <= MAX_LOG_LINE_CHARS else ln[:MAX_LOG_LINE_CHARS] + " [...]" for ln in keep[-limit:]]
    while sum(len(ln) for ln in out) > MAX_LOG_CHARS:
        out.pop(0)
    note = ""
    if len(keep) > len(out):
        by_limit = max(len(keep) - limit, 0)  # what limit left out; the rest went for the answer's size
        cut = [f"{by_limit} earlier matching line(s) left out by limit={limit}"
               + (f" (up to {MAX_LOG_LINES})" if limit < MAX_LOG_LINES else "")] if by_limit else []
        if len(keep) - by_limit > len(out):
            cut.append(f"{len(keep) - by_limit - len(out)} {'more' if by_limit else 'earlier matching line(s)'} "
                       f"left out to keep the answer under {MAX_LOG_CHARS} characters")
        note = "; ".join(cut) + "; filter by level or contains to see specific lines"
    elif not keep:
        note = "the log is empty" if not lines else "no line matches the filter"
    if over_long:
        note += ("; " if note else "") + (f"run.log ends with one line longer than the {_LOG_SCAN_BYTES >> 20} MiB "
                                          f"scanned (the log is {size / 1e6:.1f} MB): only its end is shown")
    elif start > 0:
        note += ("; " if note else "") + f"only the last {_LOG_SCAN_BYTES // (1024 * 1024)} MiB of the log were scanned"
    return LogTail(run_id=run_dir.name, lines=out, matched_lines_scanned=len(keep), log_bytes=size,
                   scanned_bytes=size - start, note=note)

