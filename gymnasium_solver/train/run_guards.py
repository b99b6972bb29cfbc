"""What surrounds a training run in its process: SIGINT/SIGTERM become a graceful-stop flag, and
Python warnings are copied into run.log."""

from __future__ import annotations

import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from gymnasium_solver.train.run_writer import RunWriter


@contextmanager
def stop_on_signals() -> Iterator[Any]:
    """SIGINT/SIGTERM set a flag the loop checks after each iteration (a graceful stop with a
    final evaluation and checkpoint) instead of killing the process mid-write."""
    flag = {"stop": False}

    def handler(signum: int, frame: FrameType | None) -> None:
        flag["stop"] = True

    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:
        pass  # not the main thread: signals cannot be handled here; the caller owns them
    try:
        yield lambda: flag["stop"]
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


@contextmanager
def warnings_to(writer: RunWriter) -> Iterator[None]:
    """Python warnings raised while training go to run.log (as well as the usual stderr)."""
    with warnings.catch_warnings():
        previous = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
            writer.log(f"warning: {category.__name__}: {message} ({filename}:{lineno})")
            previous(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield
