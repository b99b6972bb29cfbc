"""MCP tool ``resume_training``: a thin adapter over ``gymnasium_solver.resume.start_resume``.

``register(server, store)`` is called by ``mcp_server.server.create_server``. The tool checks the
run, starts ``gsolve train --resume RUN`` detached and returns at once; it never imports torch.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.locations import LocationPolicy
from gymnasium_solver.resume import ResumeStart, plan_resume, start_resume
from gymnasium_solver.run_store import RunStore
from mcp_server.common import STARTS_PROCESS, RunRef, tool


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add resume_training to ``server``, over the runs folder of ``store``; with ``limits``, a
    resume counts against the live-run cap and its config against the budget caps, like a start.
    The run's config comes from its folder, which may be someone else's: its tracking URI must be
    one ``locations`` allows (None: the default store and the runs folder only)."""
    policy = locations or LocationPolicy.from_options()

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def resume_training(run_id: RunRef) -> ResumeStart:
        """Continue a crashed, stopped or failed training run from its latest checkpoint, in the background.

        Restores the weights, optimizer state, observation normaliser, random-number states, schedules and
        the env-step counter, and appends to the same run (metrics rows written after the checkpoint are
        replaced; the resume is recorded in run.json 'resumes'). The environments start fresh episodes.
        Returns at once with the checkpoint and env steps it continues from; follow it with
        wait_for_training. Refused, with the reason, for a run that is still running, a completed or solved
        run, a run without a checkpoint, or one whose config no longer validates (start a new run then)."""
        run_dir = store.resolve(run_id)
        cfg = plan_resume(run_dir).config
        policy.check_config(cfg.model_dump(mode="json"), store.runs_dir, f"resuming {run_dir.name}")
        if limits is not None:
            check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"resuming {run_dir.name}")
            check_capacity(store, limits)
        return start_resume(run_dir)
