"""MCP tools ``check_run`` (named after `gsolve check`; it was compare_to_baseline), ``list_models`` and
``promote_run``: thin adapters over
``gymnasium_solver.ops.regression``, ``model_registry`` and ``promotion`` (docs/ops.md).

``promote_run`` re-evaluates a checkpoint, which needs torch, so it runs ``gsolve promote --json``
in a child process and waits for it without blocking the server (bounded, with progress
notifications); the server itself never imports torch. It applies the policy only: a manual
approval of a rejected run is for a person at the CLI (``gsolve promote --approve-manually --reason``).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from gymnasium_solver.config import env_modules
from gymnasium_solver.launcher import RunLimitError, StartLimits, check_capacity
from gymnasium_solver.ops import model_registry, promotion, regression
from gymnasium_solver.ops.model_registry import ModelList
from gymnasium_solver.ops.registry_records import MAX_EPISODES, MIN_EPISODES, Decision, check_episodes
from gymnasium_solver.run_store import RunStore, refuse_live
from mcp_server.common import READ_ONLY, STARTS_PROCESS, RunRef, run_gsolve_json, tool

PROMOTE_TIMEOUT_SECONDS = 600.0
# The server's own cap, below the registry's MAX_EPISODES: a promote_run must finish well within
# PROMOTE_TIMEOUT_SECONDS. More is for a person at a shell (`gsolve promote --episodes`).
MAX_MCP_EPISODES = 200


async def run_promote(store: RunStore, run_id: str, episodes: int, progress: Context | None = None,
                      timeout: float = PROMOTE_TIMEOUT_SECONDS) -> Decision:
    """Run `gsolve promote RUN --json` in a child process and return the recorded decision."""
    run_dir = store.resolve(run_id)  # a clear error for unknown runs before any process starts
    # A rejection is a decision printed as JSON whatever its exit code; no JSON means it failed.
    out = await run_gsolve_json(
        ["promote", run_dir.name, "--episodes", str(episodes), "--runs-dir", str(store.runs_dir), "--json",
         "--actor", "mcp", *env_modules.granted_flags()], timeout=timeout,
        progress=None if progress is None else progress.report_progress,
        progress_message=f"re-evaluating {run_dir.name} over {episodes} episodes",
        on_timeout=f"promoting run {run_dir.name} took over {timeout:g} s and was stopped; nothing was recorded; "
        "retry with fewer episodes")
    return Decision.model_validate_json(out)


def check_promote_capacity(store: RunStore, limits: StartLimits | None) -> None:
    """A promote's re-evaluation is a process the server starts: it counts against the live-run cap."""
    if limits is None:
        return
    try:
        check_capacity(store, limits)
    except RunLimitError as exc:
        raise RunLimitError(f"promote_run re-evaluates in a child process, which counts as a live run: {exc}; or run "
                            "`gsolve promote RUN` from a shell") from None


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None) -> None:
    """Add check_run, list_models and promote_run to ``server``; with ``limits``, a
    promote counts against the live-run cap like a start."""

    @tool(server, READ_ONLY, store.runs_dir)
    def check_run(
        run_id: RunRef,
        baseline: Annotated[str, Field(description="a baseline run (id, prefix, '@last') or 'preset' for the "
                                                   "preset's seeds (its shipped seed sample, else its reference "
                                                   "runs)")] = regression.PRESET_BASELINE,
        alpha: Annotated[float, Field(ge=1e-6, le=0.499, description="one-sided significance level")] = 0.05,
        more_run_ids: Annotated[list[str] | None, Field(
            description="other seeds' runs of the same config, checked with run_id against 'preset' "
                        "(Mann-Whitney U)")] = None,
    ) -> regression.RegressionCheck:
        """Use to tell whether a run is significantly worse than a baseline run or than the preset's shipped
        seeds (the regression check a CI job gates on, `gsolve check`): verdict not_worse / worse /
        cannot_compare with the test, p-value and a one-sentence summary."""
        if not more_run_ids:
            return regression.check_run(store, run_id, baseline, alpha)
        if baseline.strip().lower() != regression.PRESET_BASELINE:
            raise ValueError("more_run_ids are checked together against baseline='preset' only; against a baseline "
                             "run, check one run at a time")
        if len(more_run_ids) >= 200:
            raise ValueError(f"{len(more_run_ids) + 1} runs: at most 200 in one check")
        from gymnasium_solver.ops.seed_check import check_runs_against_preset

        return check_runs_against_preset(store, [run_id, *more_run_ids], alpha)

    @tool(server, READ_ONLY, store.runs_dir)
    def list_models(
        env_id: Annotated[str | None, Field(description="only this environment, e.g. 'CartPole-v1'; "
                                                        "omit for every environment")] = None,
    ) -> ModelList:
        """Use to see which trained policy is current for an environment: registered versions newest first,
        each with its run, re-evaluation and model_ref for `gsolve eval`; with env_id, also recent decisions."""
        return model_registry.list_models(store.runs_dir, env_id)

    @tool(server, STARTS_PROCESS, store.runs_dir)
    async def promote_run(
        run_id: RunRef,
        ctx: Context,
        # The bounds are stated in the schema but checked in the body: the SDK's own check answers with
        # a multi-line pydantic dump, ours with one sentence (issue 26).
        episodes: Annotated[int, Field(description=f"fresh re-evaluation episodes, {MIN_EPISODES}-{MAX_MCP_EPISODES}",
                                       json_schema_extra={"minimum": MIN_EPISODES, "maximum": MAX_MCP_EPISODES})] = (
            promotion.DEFAULT_EPISODES),
    ) -> Decision:
        """Use when the user wants a solved run's policy registered: re-evaluates its best checkpoint on fresh
        episodes and records approval only if the policy passes (solved, no warning finding, mean >= threshold),
        else the rejection with failed_checks; takes up to minutes, progress reported."""
        if not isinstance(episodes, bool) and isinstance(episodes, int) and MAX_MCP_EPISODES < episodes <= MAX_EPISODES:
            raise ValueError(f"promote_run evaluates at most {MAX_MCP_EPISODES} episodes, got {episodes}, so it ends "
                             f"within {PROMOTE_TIMEOUT_SECONDS:g} s; run `gsolve promote RUN --episodes {episodes}` from "
                             "a shell for more")
        check_episodes(episodes, MAX_MCP_EPISODES)  # said with the tool's own range: 2-200, not the CLI's 2-1000
        refuse_live(store, store.resolve(run_id), "be promoted")  # an unknown or live run is named before the cap is
        check_promote_capacity(store, limits)
        return await run_promote(store, run_id, episodes, ctx)
