"""The training progress display on stderr (rich): a live bar on a terminal; into a pipe or a file, one
plain line per evaluation and one for the end."""

from __future__ import annotations

import datetime
import time
from typing import Any

# Below NARROW_COLUMNS the bar drops the latest rollout return and the wall time; below TINY_COLUMNS the
# step counts and the rate too (percent, eval and ETA stay): one line, never wrapped or cut.
NARROW_COLUMNS = 100
TINY_COLUMNS = 76


class ProgressBar:
    """The live progress bar on stderr, drawn by rich's own columns (bar, percent, steps, ETA): redrawn in
    place (at most every 0.2 s) only on a terminal, fitted to its width. Into a pipe or a file it writes
    a plain line at every evaluation (:meth:`evaluated`) and the final state once, never cut."""

    def __init__(self, total: int, console: Any = None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        console = console or Console(stderr=True)
        self._live = bool(console.is_terminal or console.is_jupyter)
        narrow = self._live and console.width < NARROW_COLUMNS
        tiny = self._live and console.width < TINY_COLUMNS
        # Narrow: step counts as 2.05M/10M, so that a large budget does not push the line past the width.
        counts: ProgressColumn = TextColumn("{task.fields[steps]}") if narrow else MofNCompleteColumn()
        columns: list[str | ProgressColumn] = [] if tiny else [counts, TextColumn("steps | {task.fields[fps]}")]
        if not narrow:
            columns.append(TextColumn("| {task.fields[recent]}"))
        columns.append(TextColumn("{task.fields[last_eval]}" if tiny else "| {task.fields[last_eval]}"))
        if self._live:
            # The bar takes what the other columns leave of the terminal's width (bar_width=None, expand).
            columns = [BarColumn(bar_width=None), TaskProgressColumn(), *columns,
                       TextColumn("| ETA"), TimeRemainingColumn(compact=True)]
            if not narrow:
                columns.append(TextColumn("| {task.fields[wall]}"))
        else:  # plain lines in a log: never cut to the 80 columns rich assumes for files
            columns.append(TextColumn("| {task.fields[wall]}"))
            console.width = 200
        self._console = console
        self._last_draw = 0.0
        self._total = total
        self._fields: dict[str, Any] = {"steps": f"0/{_count(total)}", "fps": "- fps", "recent": "return -", "last_eval": "eval -", "wall": "0:00:00"}
        self._progress = Progress(*columns, console=console, auto_refresh=False, expand=self._live)
        self._task = self._progress.add_task("train", total=total, **self._fields)
        self._progress.start()

    def update(self, steps: int, wall: float, fps: float, recent: float | None, last_eval: float | None) -> None:
        now = time.monotonic()
        refresh = now - self._last_draw >= 0.2
        if refresh:
            self._last_draw = now
        self._fields = {
            "steps": f"{_count(steps)}/{_count(self._total)}", "fps": f"{fps:,.0f} fps", "recent": f"return {format_return(recent)}" if recent is not None else "return -",
            "last_eval": f"eval {format_return(last_eval)}" if last_eval is not None else "eval -",
            "wall": str(datetime.timedelta(seconds=int(wall))),  # the run's wall time, a resumed run's included
        }
        self._progress.update(self._task, completed=steps, refresh=refresh, **self._fields)

    def evaluated(self, steps: int, wall: float, return_mean: float, return_std: float, solved: bool) -> None:
        """One line per evaluation into a pipe or a file (on a terminal the bar shows it instead)."""
        if self._live:
            return
        pct = f" ({steps / self._total:.0%})" if self._total else ""
        self._console.print(
            f"eval at {steps}/{self._total} steps{pct}: return {format_return(return_mean)} ± {format_return(return_std, return_mean)}"
            f"{' (solved)' if solved else ''} | {self._fields['fps']} | {self._fields['recent']} | "
            f"{datetime.timedelta(seconds=int(wall))}", markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        self._progress.stop()


def format_return(x: float, scale: float | None = None) -> str:
    """A return with one decimal, or three when the returns are small (``scale``, default ``x``, below 10 in
    magnitude): MiniGrid's 0.8725 of its 0.9 threshold printed as 0.9, as if it had reached it."""
    return f"{x:.1f}" if max(abs(x), abs(scale if scale is not None else x)) >= 10 else f"{x:.3f}"


def _count(n: int) -> str:
    """A step count in at most 6 characters: 2048, 204.8k, 10M."""
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1e3:.1f}k".replace(".0k", "k")
    return f"{n / 1e6:.2f}".rstrip("0").rstrip(".") + "M"
