"""The training progress bar on stderr (rich): live on a terminal, one plain final line otherwise."""

from __future__ import annotations

import datetime
import time
from typing import Any


class ProgressBar:
    """The live progress bar on stderr, drawn by rich: redrawn in place (at most every 0.2 s) only
    on a terminal; into a pipe or a file it writes just the final state, once, as a plain line."""

    def __init__(self, total: int, console: Any = None):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn

        console = console or Console(stderr=True)
        columns: list[str | ProgressColumn] = [MofNCompleteColumn(), TextColumn("steps"), TextColumn(
            "| {task.fields[fps]} | {task.fields[recent]} | {task.fields[last_eval]} | {task.fields[wall]}")]
        if console.is_terminal or console.is_jupyter:
            columns.insert(0, BarColumn(bar_width=24))
        else:  # the one final line in a log: plain text, never cut to the 80 columns rich assumes for files
            console.width = 200
        self._last_draw = 0.0
        self._progress = Progress(*columns, console=console, auto_refresh=False)
        self._task = self._progress.add_task("train", total=total, fps="- fps", recent="return -", last_eval="eval -",
                                             wall="0:00:00")
        self._progress.start()

    def update(self, steps: int, wall: float, fps: float, recent: float | None, last_eval: float | None) -> None:
        now = time.monotonic()
        refresh = now - self._last_draw >= 0.2
        if refresh:
            self._last_draw = now
        self._progress.update(
            self._task, completed=steps, refresh=refresh, fps=f"{fps:,.0f} fps",
            recent=f"return {recent:.1f}" if recent is not None else "return -",
            last_eval=f"eval {last_eval:.1f}" if last_eval is not None else "eval -",
            wall=str(datetime.timedelta(seconds=int(wall))),  # the run's wall time, a resumed run's included
        )

    def close(self) -> None:
        self._progress.stop()
