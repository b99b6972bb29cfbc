"""Weights & Biases logging of a run, offline by default: the config, every metrics.csv column keyed by
env steps and the final results, written by wandb into ``runs/<run_id>/wandb/`` and uploaded later
with ``wandb sync runs/<run_id>/wandb/offline-run-*`` (docs/tracking.md). No account, key or network
is needed to train; nothing leaves the machine until the user syncs."""

from __future__ import annotations

import math
import os
from typing import Any

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.locations import LocationPolicy
from gymnasium_solver.train.tracking.sinks import Row, SinkContext, final_results

DEFAULT_PROJECT = "gymnasium-solver"
WANDB_DIR = "wandb"  # wandb writes <run folder>/wandb/offline-run-<time>-<id>/run-<id>.wandb
# wandb prints to the terminal on its own (and suggests W&B Weave because our package is named ``agents``,
# one of the LLM libraries it looks for): the run's output is ours. Set only when the user has not.
_ENV_DEFAULTS = {"WANDB_SILENT": "true", "WANDB_DISABLE_WEAVE": "true"}
_END_EXIT_CODE = {rf.RunStatus.COMPLETED: 0, rf.RunStatus.STOPPED: 0}


def wandb_mode() -> str:
    """``offline`` unless the user's environment says otherwise (WANDB_MODE=online). A run started by a
    confining MCP server is always offline: its client must not choose to upload anything to a host."""
    if LocationPolicy.from_env().confined:
        return "offline"
    mode = os.environ.get("WANDB_MODE", "offline")
    return mode if mode in ("online", "offline", "disabled") else "offline"


class WandbSink:
    name = "wandb"

    def __init__(self, project: str | None):
        self._project = project or DEFAULT_PROJECT
        self._run: Any = None

    def start(self, ctx: SinkContext) -> None:
        for key, value in _ENV_DEFAULTS.items():
            os.environ.setdefault(key, value)
        import wandb

        info = ctx.info
        folder = ctx.run_dir  # wandb adds its own wandb/ folder below the dir it is given
        settings = wandb.Settings(
            mode=wandb_mode(),  # type: ignore[arg-type]
            # Our run's output is ours: wandb must not wrap stdout/stderr (the progress bar) nor print.
            console="off", silent=True,
            # No system metrics or machine facts: they poll the machine (and a cloud metadata address)
            # every few seconds, which a trainer on 2 shared cores does not want.
            x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True, disable_git=True,
            save_code=False, x_save_requirements=False,
        )
        self._run = wandb.init(
            project=self._project, dir=str(folder), id=info.run_id, name=info.run_id, group=info.config_id,
            job_type="train", tags=[info.env_id, info.algo], config=ctx.config, settings=settings,
            resume="allow", reinit="create_new",
        )
        # Every metric is plotted against env steps (its own column), as in the run folder.
        self._run.define_metric(rf.M.ENV_STEPS)
        self._run.define_metric("*", step_metric=rf.M.ENV_STEPS)
        info.tracking.update(wandb_dir=f"{ctx.run_dir.name}/{WANDB_DIR}", wandb_run_id=self._run.id,
                             wandb_project=self._project, wandb_mode=settings.mode)

    def append(self, row: Row) -> None:
        if row.get(rf.M.ENV_STEPS) is None:
            return
        self._run.log({k: v for k, v in row.items() if v is not None and math.isfinite(v)})

    def finish(self, info: rf.RunInfo) -> None:
        run = self._run
        run.summary.update({f"final/{k}": v for k, v in final_results(info).items()})
        run.summary.update({"gsolve/status": info.status.value,
                            "gsolve/stop_reason": info.stop_reason.value if info.stop_reason else None})
        run.finish(exit_code=_END_EXIT_CODE.get(info.status, 1))
        self._run = None

    def close(self) -> None:
        if self._run is not None:
            self._run.finish(exit_code=1)
            self._run = None
