"""MCP tools ``start_training`` (a new run, or ``resume`` one from its checkpoint) and ``stop_training``:
thin adapters over ``gymnasium_solver.launcher`` and ``gymnasium_solver.train.resume``.

``register(server, store, limits, locations)`` is called by ``mcp_server.server.create_server``. A
start or resume checks the config against the server's caps and tracking-location policy, starts
``gsolve train`` detached and returns at once; nothing here imports torch.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher
from gymnasium_solver.contract.locations import LocationPolicy
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.train.resume import ResumeStart, plan_resume, start_resume
from mcp_server.common import STARTS_PROCESS, STOPS_PROCESS, RunRef, result_in_tool_terms, tool

log = logging.getLogger("gymnasium_solver.mcp")


class TrainingStart(BaseModel):
    run_id: str = Field(description="the run to follow with get_run_info(view='status', wait_seconds=60)")
    started: launcher.StartResult | None = Field(default=None, description="a new run: its config id, budget, "
                                                 "threshold, overrides and where its settings came from")
    resumed: ResumeStart | None = Field(default=None, description="a resumed run: the checkpoint and env steps it "
                                        "continues from")


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add start_training and stop_training to ``server``, over the runs folder of ``store``. With
    ``limits``, a start or a resume counts against the live-run cap and its config against the budget
    caps; its tracking URI must be one ``locations`` allows (None: the default store and the runs
    folder only): a resumed run's config comes from its folder, which may be someone else's."""
    limits = limits or StartLimits.from_options()
    policy = locations or LocationPolicy.from_options()

    def resume_run(ref: str) -> ResumeStart:
        run_dir = store.resolve(ref)
        cfg = plan_resume(run_dir).config
        policy.check_config(cfg.model_dump(mode="json"), store.runs_dir, f"resuming {run_dir.name}")
        check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"resuming {run_dir.name}")
        check_capacity(store, limits)
        return start_resume(run_dir)

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def start_training(
        config_id: Annotated[str | None, Field(max_length=200, description="ENV:VARIANT preset, e.g. "
                                               "'CartPole-v1:ppo', ENV:ALGO for any registered environment, e.g. "
                                               "'MountainCar-v0:dqn', or a bare ENV (algorithm chosen from its "
                                               "spaces)")] = None,
        overrides: Annotated[
            dict[str, Any] | None,
            Field(description="config keys to change, e.g. {'learning_rate': 0.0005, 'max_env_steps': 100000} (the RL "
                  "Zoo's / SB3's names too, e.g. n_timesteps, read into ours); "
                  "schedules as {'start': x, 'end': y}; mlflow_tracking_uri only inside the runs folder or where "
                  "the server's operator allowed"),
        ] = None,
        resume: Annotated[str | None, Field(description="instead of config_id: a crashed, stopped or failed run to "
                                            "continue from its latest checkpoint (run id, prefix or '@last')")] = None,
        zoo: Annotated[bool, Field(description="false: skip the RL Zoo's entry for an environment without a preset "
                                   "(gsolve's defaults; for an entry that is refused)")] = True,
    ) -> TrainingStart:
        """Use to train: starts a run in the background (settings from our preset, else the RL Zoo's entry,
        else defaults; validated first) or resumes a crashed/stopped/failed one from its latest checkpoint,
        and returns its run_id at once; the process keeps running if this server stops."""
        if (config_id is None) == (resume is None):
            raise ValueError("pass exactly one of config_id (a new run, e.g. 'CartPole-v1:ppo') or resume "
                             "(a run to continue)")
        if resume is not None:
            if overrides:
                raise ValueError("a resumed run keeps its config; start a new run (config_id) to change settings")
            resumed = resume_run(resume)
            log.info("resumed run %s pid %s", resumed.run_id, resumed.pid)
            return TrainingStart(run_id=resumed.run_id, resumed=resumed)
        assert config_id is not None
        cfg = config_mod.resolve_config(config_id, launcher.override_pairs(overrides or {}), use_zoo=zoo)
        policy.check_config(cfg.model_dump(mode="json"), store.runs_dir, cfg.config_id)
        started = launcher.start_training(store.runs_dir, config_id, overrides, limits, use_zoo=zoo)
        log.info("started run %s (%s) pid %s", started.run_id, started.config_id, started.pid)
        return TrainingStart(run_id=started.run_id, started=result_in_tool_terms(started))

    @tool(server, STOPS_PROCESS, store.runs_dir)
    async def stop_training(
        run_id: RunRef,
        timeout_seconds: Annotated[
            float, Field(ge=1, le=launcher.MAX_STOP_TIMEOUT, description="grace period before SIGKILL")
        ] = 20.0,
    ) -> launcher.StopResult:
        """Use only when the user asks to end a run early: it stops gracefully (final evaluation and
        checkpoint, status 'stopped'), or is killed after timeout_seconds; a run not running is left alone."""
        return await launcher.stop_training(store, store.resolve(run_id), timeout_seconds)
