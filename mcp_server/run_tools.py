"""MCP tools that read runs: ``list_runs``, ``get_run_info``, ``get_run_metrics``, ``get_run_logs``,
``compare_runs`` and ``plot_runs``: thin adapters over ``gymnasium_solver.run_store``, ``launcher``
and ``plotting``.

Several former tools are views of these (issue 24 item 4; docs/mcp.md says why each merge):
get_run_info holds the live status, the wait for a run to finish and the checkpoint list;
get_run_metrics the metric catalog; compare_runs the best run of an environment; plot_runs both
plots. All are read-only.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher, plotting
from gymnasium_solver import run_folder as rf
from gymnasium_solver import run_store as rs
from mcp_server.common import READ_ONLY, RunRef, tool

RunView = Literal["details", "status", "checkpoints"]


class RunReport(BaseModel):
    run_id: str
    status: rs.TrainingStatus = Field(description="live status: progress, fps, ETA, heartbeat age, latest and "
                                      "best eval, solved; finished=true once the run will not change")
    details: rs.RunDetails | None = Field(default=None, description="view 'details': summary, failure, best/final "
                                          "eval, key hyperparameters, differences from the preset, files")
    checkpoints: rs.CheckpointList | None = Field(default=None, description="view 'checkpoints': each checkpoint's "
                                                  "name for `gsolve eval RUN --checkpoint NAME`, role, env steps, eval")
    waited_seconds: float = 0.0
    note: str = ""


class MetricsReport(BaseModel):
    curves: rs.MetricsResult | None = Field(default=None, description="per metric: env_steps and values "
                                            "(downsampled, min/max kept), first/last/min/max, non-finite steps")
    catalog: rs.MetricList | None = Field(default=None, description="catalog=true: every metric column this run "
                                          "wrote, what it means, rows measured, last value")


class RunComparison(BaseModel):
    comparison: rs.Comparison | None = Field(default=None, description="run_ids: config keys that differ, best and "
                                             "final eval, who reached the threshold first in env steps and time")
    best: rs.BestRun | None = Field(default=None, description="env_id: the best run (solved in fewest env steps, "
                                    "else highest eval) and the top 5")


async def run_report(store: rs.RunStore, run_dir: Path, view: RunView, wait_seconds: float,
                     progress: launcher.ProgressCallback | None = None) -> RunReport:
    """One run's live status (after waiting up to ``wait_seconds`` for it to finish) and the view asked for."""
    waited, note = 0.0, ""
    if wait_seconds > 0:
        waiting = await launcher.wait_for_training(store, run_dir, wait_seconds, progress)
        status, waited, note = waiting.status, waiting.waited_seconds, waiting.note
    else:
        status = await anyio.to_thread.run_sync(rs.training_status, store, run_dir)
    report = RunReport(run_id=run_dir.name, status=status, waited_seconds=waited, note=note)
    if view == "details":
        report.details = await anyio.to_thread.run_sync(rs.run_details, store, run_dir)
    elif view == "checkpoints":
        report.checkpoints = await anyio.to_thread.run_sync(rs.list_checkpoints, run_dir)
    return report


def plot(store: rs.RunStore, run_ids: list[str], metric: str, start_env_steps: int | None,
         end_env_steps: int | None) -> CallToolResult:
    """One run's metric (optionally over an env-step range) or several runs' on shared axes, as PNG + words."""
    dirs: list[Path] = []
    for ref in run_ids:
        d = store.resolve(ref)
        if d not in dirs:
            dirs.append(d)
    if len(dirs) == 1:
        png, result = plotting.plot_run_metric(store, dirs[0], metric, start_env_steps, end_env_steps)
    elif start_env_steps is not None or end_env_steps is not None:
        raise ValueError("start_env_steps/end_env_steps narrow a one-run plot; plot several runs without them")
    else:
        png, result = plotting.plot_compare_runs(store, dirs, metric)
    return CallToolResult(
        content=[
            ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png"),
            TextContent(type="text", text=result.summary),
        ],
        structured_content=result.model_dump(mode="json"),
    )


def register(server: MCPServer, store: rs.RunStore) -> None:
    """Add the run-reading tools to ``server``, reading runs through ``store``."""

    @tool(server, READ_ONLY, store.runs_dir)
    def list_runs(
        env_id: Annotated[str | None, Field(description="only runs of this environment, e.g. 'CartPole-v1'")] = None,
        algo: Annotated[config_mod.Algo | None, Field(description="only runs of this algorithm")] = None,
        status: Annotated[
            rf.RunStatus | None,
            Field(description="only runs with this status; 'crashed' = marked running but the process is gone"),
        ] = None,
        solved: Annotated[bool | None, Field(description="only runs that did (true) / did not (false) solve")] = None,
        limit: Annotated[int, Field(ge=1, le=rs.MAX_LIST_LIMIT, description="runs per page")] = 20,
        cursor: Annotated[str | None, Field(description="next_cursor from the previous page")] = None,
    ) -> rs.RunList:
        """Use to find runs: newest first, with status, progress, best/final eval return and solved;
        filter by environment, algorithm, status or solved, page with cursor."""
        return rs.list_runs(store, env_id, algo, status, solved, limit, cursor)

    @tool(server, READ_ONLY, store.runs_dir)
    async def get_run_info(
        run_id: RunRef,
        ctx: Context,
        view: Annotated[RunView, Field(description="'details' (everything on one screen), 'status' (cheap live "
                                       "status only) or 'checkpoints' (the saved checkpoints)")] = "details",
        wait_seconds: Annotated[float, Field(ge=0, le=launcher.MAX_WAIT_SECONDS, description="first wait this long "
                                             "(max 60, progress reported) for a live run to finish")] = 0.0,
    ) -> RunReport:
        """Use for one run's state: status (crashed detection included), stop reason, failure, progress and
        ETA, best/final eval, solved, key hyperparameters and differences from its preset. To follow a run
        you started, call it with view='status' and wait_seconds=60 until status.finished is true."""

        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.report_progress(done, total, message)

        return await run_report(store, store.resolve(run_id), view, wait_seconds, progress)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_run_metrics(
        run_id: RunRef,
        metrics: Annotated[
            list[str] | None,
            Field(description=f"metric columns to return; default: {', '.join(rs.DEFAULT_METRICS)}"),
        ] = None,
        start_env_steps: Annotated[int | None, Field(ge=0, description="only rows at or after this env step")] = None,
        end_env_steps: Annotated[int | None, Field(ge=0, description="only rows at or before this env step")] = None,
        max_points: Annotated[
            int, Field(ge=10, le=rs.MAX_POINTS_PER_SERIES, description="points per metric after downsampling")
        ] = 200,
        catalog: Annotated[bool, Field(description="instead of curves: every metric this run wrote, with its "
                                       "meaning, rows measured and last value")] = False,
    ) -> MetricsReport:
        """Use for the training curves behind a finding (against env steps; downsampling keeps spikes, the
        note says what was cut), or with catalog=true to see which metrics a run has and what each means."""
        run_dir = store.resolve(run_id)
        if catalog:
            return MetricsReport(catalog=rs.available_metrics(store, run_dir))
        return MetricsReport(curves=rs.query_metrics(store, run_dir, metrics, start_env_steps, end_env_steps,
                                                     max_points))

    @tool(server, READ_ONLY, store.runs_dir)
    def get_run_logs(
        run_id: RunRef,
        limit: Annotated[int, Field(ge=1, le=rs.MAX_LOG_LINES, description="lines from the end")] = 50,
        level: Annotated[
            rf.LogLevel | None,
            Field(description="only lines at this level or above (traceback lines count as ERROR)"),
        ] = None,
        contains: Annotated[str | None, Field(max_length=200, description="only lines containing this text")] = None,
    ) -> rs.LogTail:
        """Use when a run crashed or failed: the end of its run.log (warnings, errors, tracebacks, the
        launcher's command line), filtered by level or text; bounded, the note says what was left out."""
        return rs.tail_log(store.resolve(run_id), limit, level, contains)

    @tool(server, READ_ONLY, store.runs_dir)
    def compare_runs(
        run_ids: Annotated[list[str] | None, Field(min_length=2, max_length=rs.MAX_COMPARE,
                                                   description="2 to 10 run refs to put side by side")] = None,
        env_id: Annotated[str | None, Field(description="instead of run_ids: rank this environment's runs, "
                                            "e.g. 'CartPole-v1'")] = None,
        algo: Annotated[config_mod.Algo | None, Field(description="with env_id: only this algorithm")] = None,
    ) -> RunComparison:
        """Use to compare runs side by side (run_ids: config keys that differ, results, who solved first), or
        to find a good baseline (env_id: the best run of an environment and the top 5)."""
        if (run_ids is None) == (env_id is None):
            raise ValueError("pass exactly one of run_ids (2 to 10 runs to compare) or env_id (to rank its runs)")
        if run_ids is not None:
            if algo is not None:
                raise ValueError("algo filters the runs of env_id; with run_ids, leave it out")
            return RunComparison(comparison=rs.compare_runs(store, run_ids))
        assert env_id is not None
        return RunComparison(best=rs.best_run(store, env_id, algo))

    @tool(server, READ_ONLY, store.runs_dir)
    def plot_runs(
        run_ids: Annotated[list[str], Field(min_length=1, max_length=rs.MAX_COMPARE, description="1 to 10 run refs")],
        metric: Annotated[str, Field(description=f"metric column, e.g. {rf.M.EVAL_RETURN_MEAN!r}; "
                                     "get_run_metrics(catalog=true) lists them")] = rf.M.EVAL_RETURN_MEAN,
        start_env_steps: Annotated[int | None, Field(ge=0, description="one run: plot from this env step")] = None,
        end_env_steps: Annotated[int | None, Field(ge=0, description="one run: plot up to this env step")] = None,
    ) -> Annotated[CallToolResult, plotting.PlotResult]:
        """Use when a picture helps the user: a PNG of one metric against env steps for one run (reward
        threshold drawn) or several on shared axes, with a description of each curve."""
        return plot(store, run_ids, metric, start_env_steps, end_env_steps)
