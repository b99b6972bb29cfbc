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
from gymnasium_solver.jobs.seed_runs import check_seeds
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.run_store import MAX_COMPARE, RunStore
from gymnasium_solver.train.resume import ResumeStart, plan_resume, start_resume
from mcp_server.common import STARTS_PROCESS, STOPS_PROCESS, RunRef, result_in_tool_terms, tool

log = logging.getLogger("gymnasium_solver.mcp")


class TrainingStart(BaseModel):
    run_id: str = Field(description="the run to follow with get_run_info(view='status', wait_seconds=60) (with "
                        "seeds: the first seed's)")
    run_ids: list[str] = Field(default_factory=list, description="with seeds: one run per seed, in the seeds' "
                               "order; judge them together with compare_runs(run_ids=...) once they have ended")
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
        seeds: Annotated[list[int] | None, Field(
            max_length=MAX_COMPARE, description="judge the config over seeds, not one: one run per seed, all started "
            "now (up to 10 and the server's free live-run slots), e.g. [0, 1, 2, 3, 4]; then "
            "compare_runs(run_ids=...) gives solved k of n and the spread")] = None,
    ) -> TrainingStart:
        """Use to train: starts a run in the background (settings from our preset, else the RL Zoo's entry,
        else defaults; validated first), or with seeds one run per seed to judge a config over seeds, or
        resumes a crashed/stopped/failed one from its latest checkpoint, and returns at once; the processes
        keep running if this server stops."""
        if (config_id is None) == (resume is None):
            raise ValueError("pass exactly one of config_id (a new run, e.g. 'CartPole-v1:ppo') or resume "
                             "(a run to continue)")
        if resume is not None:
            if overrides or seeds:
                raise ValueError("a resumed run keeps its config and seed; start new runs (config_id) to change "
                                 "settings or seeds")
            resumed = resume_run(resume)
            log.info("resumed run %s pid %s", resumed.run_id, resumed.pid)
            return TrainingStart(run_id=resumed.run_id, resumed=resumed)
        assert config_id is not None
        cfg = config_mod.resolve_config(config_id, launcher.override_pairs(overrides or {}), use_zoo=zoo)
        policy.check_config(cfg.model_dump(mode="json"), store.runs_dir, cfg.config_id)
        if seeds is not None:
            return start_seeds(config_id, overrides or {}, check_seeds(list(seeds)), zoo)
        started = launcher.start_training(store.runs_dir, config_id, overrides, limits, use_zoo=zoo)
        log.info("started run %s (%s) pid %s", started.run_id, started.config_id, started.pid)
        return TrainingStart(run_id=started.run_id, started=result_in_tool_terms(started))

    def start_seeds(config_id: str, overrides: dict[str, Any], seeds: list[int], zoo: bool) -> TrainingStart:
        """One run per seed, started together: all of them fit under the live-run cap, or none starts."""
        if "seed" in overrides:
            raise ValueError("pass the seeds in seeds, not a seed in overrides")
        check_capacity(store, limits, needed=len(seeds))
        started: list[launcher.StartResult] = []
        for seed in seeds:
            try:
                started.append(launcher.start_training(store.runs_dir, config_id, {**overrides, "seed": seed}, limits,
                                                       use_zoo=zoo))
            except ValueError as exc:  # another client took a slot in between: say what did start
                begun = ", ".join(r.run_id for r in started) or "none"
                raise ValueError(f"seed {seed} did not start ({exc}); started before it: {begun}") from exc
        log.info("started %d runs of %s over seeds %s", len(started), config_id, seeds)
        ids = [r.run_id for r in started]
        first = result_in_tool_terms(started[0])
        first.note = (f"{len(ids)} runs started in the background, one per seed ({', '.join(map(str, seeds))}); "
                      f"follow one with get_run_info(view='status', wait_seconds=60), then judge them together "
                      f"with compare_runs(run_ids={ids!r})" if len(ids) > 1 else
                      f"1 run started in the background (seed {seeds[0]}); one seed is one draw: follow it with "
                      f"get_run_info(run_id={ids[0]!r}, view='status', wait_seconds=60)")
        return TrainingStart(run_id=ids[0], run_ids=ids, started=first)

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
