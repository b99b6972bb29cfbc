"""MCP tools that read runs: ``list_runs``, ``get_run_info``, ``get_run_metrics``, ``get_run_logs``,
``compare_runs`` and ``plot_runs``: thin adapters over ``gymnasium_solver.run_store``, ``launcher``
and ``plotting``.

Several former tools are views of these (issue 24 item 4; docs/mcp.md says why each merge):
get_run_info holds the live status, the wait for a run to finish, the checkpoint list and a few
frames of the policy at work; get_run_metrics the metric catalog; compare_runs the best run of an
environment; plot_runs both plots. All are read-only.

The frames need torch (a policy forward), which the server never imports: they are rendered by
`gsolve eval --frames` in a child process (common.run_gsolve_json), one at a time, bounded in time,
count and pixel size, and come back as PNG image content.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher, plotting
from gymnasium_solver import run_store as rs
from gymnasium_solver.config import env_modules
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.ops.seed_check import with_vs_preset
from gymnasium_solver.train.policy_eval import MAX_SAMPLED_FRAMES, EvalReport
from mcp_server.common import READ_ONLY, RunRef, run_gsolve_json, tool

RunView = Literal["details", "status", "checkpoints", "frames"]
FRAMES_TIMEOUT_SECONDS = 120.0
MAX_FRAMES = MAX_SAMPLED_FRAMES
MAX_FRAME_BYTES = 512 * 1024  # a 256-pixel PNG is a few KB; anything larger is not what we wrote
MAX_PLOT_RUNS = 100  # runs in one plot after ENV:VARIANT refs expand


class PolicyFrames(BaseModel):
    checkpoint: str
    env_steps: int = Field(description="env steps the policy was trained for")
    seed: int
    episode_return: float
    episode_length: int
    steps: list[int] = Field(description="the episode step each image shows, in the order of the images")
    width: int
    height: int


class RunReport(BaseModel):
    run_id: str
    status: rs.TrainingStatus = Field(description="live status: progress, fps, ETA, heartbeat age, latest and "
                                      "best eval, solved; finished=true once the run will not change")
    details: rs.RunDetails | None = Field(default=None, description="view 'details': summary, failure, best/final "
                                          "eval, key hyperparameters, differences from the preset, files")
    checkpoints: rs.CheckpointList | None = Field(default=None, description="view 'checkpoints': each checkpoint's "
                                                  "name for `gsolve eval RUN --checkpoint NAME`, role, env steps, eval")
    frames: PolicyFrames | None = Field(default=None, description="view 'frames': one deterministic episode of a "
                                        "checkpoint (return, length), shown as PNG images at these steps")
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
                                    "else highest eval), the top 5 runs, and the top 5 configs over their seeds")


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


async def policy_frames(store: rs.RunStore, run_dir: Path, checkpoint: str, count: int,
                        progress: launcher.ProgressCallback | None = None,
                        timeout: float = FRAMES_TIMEOUT_SECONDS) -> tuple[PolicyFrames, list[bytes]]:
    """``count`` frames of one deterministic episode (seed 0) of the run's checkpoint, rendered by
    `gsolve eval --frames` in a child process: what they show, and the PNGs in episode order."""
    if not 1 <= count <= MAX_FRAMES:
        raise ValueError(f"frame_count must be between 1 and {MAX_FRAMES}, got {count}")

    with tempfile.TemporaryDirectory(prefix="gsolve-frames-") as tmp:
        out = await run_gsolve_json(
            ["eval", run_dir.name, "--checkpoint", checkpoint, "--episodes", "1", "--frames", tmp, "--frame-count",
             str(count), "--runs-dir", str(store.runs_dir), "--json", *env_modules.granted_flags()],
            timeout=timeout, progress=progress,
            progress_message=f"playing an episode of {run_dir.name}'s {checkpoint} checkpoint",
            on_timeout=f"rendering an episode of {run_dir.name} took over {timeout:g} s and was stopped; try "
            "`gsolve eval RUN --video out.gif` from a shell")
        report = EvalReport.model_validate_json(out)
        if report.frames is None:
            raise ValueError(f"gsolve eval wrote no frames for {run_dir.name}")
        f = report.frames
        pngs = []
        for name in f.files[:MAX_FRAMES]:
            path = Path(tmp) / Path(name).name
            if path.stat().st_size > MAX_FRAME_BYTES:
                raise ValueError(f"frame {name} of {run_dir.name} is over {MAX_FRAME_BYTES // 1024} KB; not returned")
            pngs.append(path.read_bytes())
    return PolicyFrames(checkpoint=checkpoint, env_steps=report.env_steps, seed=f.seed,
                        episode_return=f.episode_return, episode_length=f.episode_length, steps=f.steps[:MAX_FRAMES],
                        width=f.width, height=f.height), pngs


def frames_text(run_id: str, f: PolicyFrames) -> str:
    return (f"{len(f.steps)} frames ({f.width}x{f.height} PNG) of one deterministic episode (seed {f.seed}) of run "
            f"{run_id}'s {f.checkpoint} checkpoint, trained {f.env_steps:,} env steps: return {f.episode_return:g}, "
            f"length {f.episode_length} steps; the images show steps {', '.join(map(str, f.steps))}.")


def with_images(report: BaseModel, text: str, pngs: list[bytes]) -> CallToolResult:
    """A tool result of PNG images and a sentence, with ``report`` as its structured content."""
    return CallToolResult(
        content=[*(ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
                   for png in pngs), TextContent(type="text", text=text)],
        structured_content=report.model_dump(mode="json"),
    )


def plot(store: rs.RunStore, refs: list[str], metric: str, group_by: str, smooth: int, band: str,
         start_env_steps: int | None, end_env_steps: int | None) -> CallToolResult:
    """`gsolve plot` as a tool: per config a mean line and a band over its seeds (or a line per run), the
    threshold dashed, a title; the PNG and what it shows."""
    dirs = rs.select_runs(store, refs)
    if len(dirs) > MAX_PLOT_RUNS:
        raise ValueError(f"{len(dirs)} runs to plot, at most {MAX_PLOT_RUNS}: name fewer configs or runs, or use "
                         "`gsolve plot` from a shell")
    if start_env_steps is not None and end_env_steps is not None and end_env_steps < start_env_steps:
        raise ValueError(f"end_env_steps ({end_env_steps}) is before start_env_steps ({start_env_steps})")
    png, result = plotting.plot_groups(store, dirs, metric, group_by, smooth, band, None, start_env_steps,
                                       end_env_steps)
    return with_images(result, "\n".join([result.title, *(g.text for g in result.groups)]), [png])


def register(server: MCPServer, store: rs.RunStore) -> None:
    """Add the run-reading tools to ``server``, reading runs through ``store``."""
    frames_lock = anyio.Lock()

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
        kind: Annotated[rs.RunKind, Field(description="'train' (default): runs someone started; 'trial': only the "
                                          "trial runs of fixes and sweeps; 'all': both")] = rs.RunKind.TRAIN,
    ) -> rs.RunList:
        """Use to find runs: newest first, with status, progress, best/final eval return and solved;
        filter by environment, algorithm, status or solved, page with cursor. Fix and sweep trials are
        counted in `hidden` unless kind asks for them (`gsolve runs` lists the same way)."""
        result = rs.list_runs(store, env_id, algo, status, solved, limit, cursor, kind)
        if result.hidden:
            what = "fix/sweep trial runs" if kind == rs.RunKind.TRAIN else "runs that are not trials"
            hint = f"{result.hidden} {what} hidden (kind='all' lists them)"
            result.note = f"{result.note}; {hint}" if result.note else hint
        return result

    @tool(server, READ_ONLY, store.runs_dir)
    async def get_run_info(
        run_id: RunRef,
        ctx: Context,
        view: Annotated[RunView, Field(description="'details' (everything on one screen), 'status' (cheap live "
                                       "status only), 'checkpoints' (the saved checkpoints) or 'frames' (images "
                                       "of one episode of the policy)")] = "details",
        wait_seconds: Annotated[float, Field(ge=0, le=launcher.MAX_WAIT_SECONDS, description="first wait this long "
                                             "(max 60, progress reported) for a live run to finish")] = 0.0,
        checkpoint: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                                         description="view 'frames': best, last or a name from view "
                                         "'checkpoints'")] = rf.BEST_CHECKPOINT,
        frame_count: Annotated[int, Field(ge=1, le=MAX_FRAMES, description="view 'frames': images, evenly "
                                          "spaced over the episode")] = 6,
    ) -> Annotated[CallToolResult, RunReport]:
        """Use for one run's state (status incl. crashed, failure, progress, ETA, best eval, solved, config vs
        preset; view='status' with wait_seconds=60 follows a run), or view='frames' to see what a policy that
        learned something odd actually does: a few PNG frames of one episode with its return and length."""

        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.report_progress(done, total, message)

        run_dir = store.resolve(run_id)
        report = await run_report(store, run_dir, "status" if view == "frames" else view, wait_seconds, progress)
        if view != "frames":
            return with_images(report, report.model_dump_json(exclude_none=True), [])
        async with frames_lock:  # one torch child process at a time, however many calls arrive
            report.frames, pngs = await policy_frames(store, run_dir, checkpoint, frame_count, progress)
        return with_images(report, frames_text(run_dir.name, report.frames), pngs)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_run_metrics(
        run_id: RunRef,
        metrics: Annotated[
            list[str] | None,
            Field(description=f"metric columns to return (not an empty list); default: {', '.join(rs.DEFAULT_METRICS)}"),
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
        """Use to compare runs side by side (run_ids: config keys that differ, results, who solved first; runs of
        one config on several seeds are grouped: solved k of n and the spread of env steps to solve), or to find
        a good baseline (env_id: the best run of an environment, the top 5 runs, and the top 5 configs judged over
        their seeds)."""
        if (run_ids is None) == (env_id is None):
            raise ValueError("pass exactly one of run_ids (2 to 10 runs to compare) or env_id (to rank its runs)")
        if run_ids is not None:
            if algo is not None:
                raise ValueError("algo filters the runs of env_id; with run_ids, leave it out")
            return RunComparison(comparison=with_vs_preset(store, rs.compare_runs(store, run_ids)))
        assert env_id is not None
        return RunComparison(best=with_vs_preset(store, rs.best_run(store, env_id, algo)))

    @tool(server, READ_ONLY, store.runs_dir)
    def plot_runs(
        run_ids: Annotated[list[str], Field(min_length=1, max_length=rs.MAX_COMPARE, description="1 to 10 run refs, "
                                            "or ENV:VARIANT for every run of that config (e.g. its seeds)")],
        metric: Annotated[str, Field(description=f"metric column, e.g. {rf.M.EVAL_RETURN_MEAN!r}; "
                                     "get_run_metrics(catalog=true) lists them")] = rf.M.EVAL_RETURN_MEAN,
        group_by: Annotated[plotting.GroupBy, Field(description="config: a mean line and band per config "
                                                            "over its seeds; run: a line per run")] = "config",
        smooth: Annotated[int, Field(ge=1, le=plotting.MAX_SMOOTH, description="moving average over this many "
                                     "points per run")] = 1,
        band: Annotated[plotting.Band, Field(description="the band over seeds: min-max or the "
                                                        "interquartile range")] = "minmax",
        start_env_steps: Annotated[int | None, Field(ge=0, description="plot from this env step")] = None,
        end_env_steps: Annotated[int | None, Field(ge=0, description="plot up to this env step")] = None,
    ) -> Annotated[CallToolResult, plotting.GroupPlotResult]:
        """Use when a picture helps the user: a PNG of one metric against env steps, as `gsolve plot` draws it
        (per config a mean line and a band over seeds, the reward threshold dashed, a title), described in words."""
        return plot(store, run_ids, metric, group_by, smooth, band, start_env_steps, end_env_steps)
