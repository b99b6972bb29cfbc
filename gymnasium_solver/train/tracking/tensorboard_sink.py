"""TensorBoard event files in ``runs/<run_id>/tensorboard/``: every metrics.csv column as a scalar
keyed by env steps, so ``tensorboard --logdir runs`` shows every run, and at the end the resolved
config as hparams with the final results, so the HPARAMS tab compares runs (docs/tracking.md)."""

from __future__ import annotations

import math
from typing import Any

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.tracking.sinks import Row, SinkContext, final_results


class TensorBoardSink:
    """Writes through ``torch.utils.tensorboard.SummaryWriter`` (the trainer already has torch; the
    tensorboard package does the encoding). Values are stored as TensorBoard stores scalars (float32)."""

    name = "tensorboard"

    def __init__(self) -> None:
        self._writer: Any = None
        self._config: dict[str, Any] = {}

    def start(self, ctx: SinkContext) -> None:
        from torch.utils.tensorboard import SummaryWriter

        folder = ctx.run_dir / rf.TENSORBOARD_DIR
        # A resume adds a new event file to the same folder; TensorBoard reads them as one run.
        self._writer = SummaryWriter(log_dir=str(folder), flush_secs=rf.HEARTBEAT_SECONDS)
        ctx.info.tracking["tensorboard"] = f"{ctx.run_dir.name}/{rf.TENSORBOARD_DIR}"
        self._config = ctx.config

    def append(self, row: Row) -> None:
        steps = row.get(rf.M.ENV_STEPS)
        if steps is None:
            return
        for key, value in row.items():
            if value is not None and math.isfinite(value):
                self._writer.add_scalar(key, value, global_step=int(steps))

    def finish(self, info: rf.RunInfo) -> None:
        """The hparams session of this run: written into the run's own event folder (torch's
        ``add_hparams`` would make a new sub-run per call), its metrics as scalars at the last step."""
        from torch.utils.tensorboard.summary import hparams

        results = {f"hparams/{k}": v for k, v in final_results(info).items()}
        file_writer = self._writer._get_file_writer()
        for summary in hparams(hparam_values(self._config), results):
            file_writer.add_summary(summary)
        for key, value in results.items():
            self._writer.add_scalar(key, value, global_step=info.progress.env_steps)
        self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None



def hparam_values(config: dict[str, Any], prefix: str = "") -> dict[str, bool | int | float | str]:
    """The config as hparams: nested keys joined with '.' (learning_rate.start); numbers, booleans and
    text as they are, anything else (None, lists) as text, which is what the hparams plugin can hold."""
    out: dict[str, bool | int | float | str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(hparam_values(value, f"{name}."))
        elif isinstance(value, bool | int | float | str):
            out[name] = value
        else:
            out[name] = str(value)
    return out
