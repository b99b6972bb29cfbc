"""TensorBoard event files in ``runs/<run_id>/tensorboard/``: every metrics.csv column as a scalar
keyed by env steps, so ``tensorboard --logdir runs`` shows every run (docs/tracking.md)."""

from __future__ import annotations

import math
from typing import Any

from gymnasium_solver import run_folder as rf
from gymnasium_solver.tracking.sinks import Row, SinkContext


class TensorBoardSink:
    """Writes through ``torch.utils.tensorboard.SummaryWriter`` (the trainer already has torch; the
    tensorboard package does the encoding). Values are stored as TensorBoard stores scalars (float32)."""

    name = "tensorboard"

    def __init__(self) -> None:
        self._writer: Any = None

    def start(self, ctx: SinkContext) -> None:
        from torch.utils.tensorboard import SummaryWriter

        folder = ctx.run_dir / rf.TENSORBOARD_DIR
        # A resume adds a new event file to the same folder; TensorBoard reads them as one run.
        self._writer = SummaryWriter(log_dir=str(folder), flush_secs=rf.HEARTBEAT_SECONDS)
        ctx.info.tracking["tensorboard"] = f"{ctx.run_dir.name}/{rf.TENSORBOARD_DIR}"

    def append(self, row: Row) -> None:
        steps = row.get(rf.M.ENV_STEPS)
        if steps is None:
            return
        for key, value in row.items():
            if value is not None and math.isfinite(value):
                self._writer.add_scalar(key, value, global_step=int(steps))

    def finish(self, info: rf.RunInfo) -> None:
        self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
