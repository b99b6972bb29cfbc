"""The gymnasium-solver MCP server: every tool an assistant needs to find, inspect, compare,
plot, start, watch and stop training runs.

Each tool is a thin adapter over a plain function in ``gymnasium_solver.run_store`` /
``launcher`` / ``plotting`` (tested directly and through ``mcp.Client``). Results are pydantic
models: Claude Code shows the model only the structured content, so everything needed is in it,
and every result is bounded (long series are downsampled, logs tailed) and says what it left out.

Nothing here imports torch (or gymnasium at start): the server must start in well under a second.
Logging goes to stderr only; stdout belongs to the stdio transport.
"""

import base64
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher, plotting
from gymnasium_solver import run_folder as rf
from gymnasium_solver import run_store as rs
from gymnasium_solver.config.catalog import MAX_CATALOG_ROWS, environment_catalog
from gymnasium_solver.locations import LocationPolicy
from gymnasium_solver.run_store.metrics import map_large_buffers
from mcp_server.common import READ_ONLY, STARTS_PROCESS, STOPS_PROCESS, RunRef, resource_errors, tool
from mcp_server.http_auth import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_SECONDS,
    BearerAuth,
    bind_warning,
    check_bind,
    check_session_limits,
)

log = logging.getLogger("gymnasium_solver.mcp")

SERVER_NAME = "gymnasium-solver"
INSTRUCTIONS = (
    "Inspect, compare, diagnose, start and stop reinforcement-learning training runs of gymnasium-solver. "
    "Runs are referenced by run id, a unique prefix of one, or '@last' (the newest run). "
    "Start a debugging session with diagnose_run, then get_run_info / get_run_metrics / get_run_logs "
    "for evidence. Step counts are environment steps."
)

MetricName = Annotated[
    str, Field(description=f"metric column, e.g. {rf.M.EVAL_RETURN_MEAN!r}; list_available_metrics shows them all")
]


# ---------------------------------------------------------------------------------------------
# Result models that only the server needs
# ---------------------------------------------------------------------------------------------
class RegisteredEnvironment(BaseModel):
    env_id: str
    settings: str = Field(description="'preset' (ours), 'zoo' (the RL Zoo's tuned entry, for zoo_algos) or 'default' "
                          "(gsolve's documented defaults only)")
    preset_variants: dict[str, str] = Field(description="preset variant -> algorithm")
    zoo_algos: list[str] = Field(description="algorithms the installed RL Zoo has an entry for")


class EnvironmentPreset(BaseModel):
    env_id: str
    description: str
    variants: dict[str, str] = Field(description="variant name -> algorithm")
    config_ids: list[str] = Field(description="ENV:VARIANT ids to pass to start_training / get_config")


class EnvironmentList(BaseModel):
    environments: list[EnvironmentPreset]
    config_dir: str
    registered: list[RegisteredEnvironment] = Field(
        default_factory=list, description="with registered=true or a filter: registered Gymnasium ids and where "
        "start_training would take their settings from")
    registered_total: int = Field(default=0, description="registered ids matching the filter (registered lists at most "
                                  "limit of them from offset)")
    note: str = ""


class VariantInfo(BaseModel):
    variant: str
    config_id: str
    algo: str
    settings: dict[str, Any] = Field(description="the variant's resolved key settings (get_config has all)")
    problem: str | None = Field(default=None, description="set if this variant does not validate")


class VariantList(BaseModel):
    env_id: str
    variants: list[VariantInfo]


class ConfigResult(BaseModel):
    source: str = Field(description="'preset' (ENV:VARIANT + overrides) or 'run' (the run's config.yaml)")
    config_id: str | None
    run_id: str | None = None
    config: dict[str, Any]
    settings_from: str | None = Field(default=None, description="where the settings came from: 'preset', 'zoo' "
                                      "(the RL Zoo's entry) or 'default', with the file or entry")
    value_sources: dict[str, str] = Field(default_factory=dict, description="config key -> where its value came from: "
                                          "preset, zoo, default, user_config, override or spec")
    notes: list[str] = Field(default_factory=list, description="what the resolution chose or could not reproduce")
    descriptions: dict[str, str] = Field(description="what each config key means")


_CONFIG_DESCRIPTIONS = {k: (f.description or "") for k, f in config_mod.CONFIG_FIELDS.items()}


def _png_result(png: bytes, result: BaseModel, summary: str) -> CallToolResult:
    return CallToolResult(
        content=[
            ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png"),
            TextContent(type="text", text=summary),
        ],
        structured_content=result.model_dump(mode="json"),
    )


# ---------------------------------------------------------------------------------------------
def create_server(runs_dir: Path | str | None = None, limits: launcher.StartLimits | None = None,
                  locations: LocationPolicy | None = None) -> MCPServer:
    """Build the server over the runs folder (None: $GSOLVE_RUNS_DIR, else ./runs). ``limits`` caps the
    runs it starts (live runs at once, budget, sub-environments); None: the defaults. ``locations``: where
    the runs it starts may log (None: the default store and the runs folder only; never unconfined)."""
    store = rs.RunStore(runs_dir)
    map_large_buffers()  # a long-lived reader: freed parse buffers go back to the system
    limits = limits or launcher.StartLimits.from_options()
    locations = locations or LocationPolicy.from_options()
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)
    _register_config_tools(server, store)
    _register_run_tools(server, store)
    _register_plot_tools(server, store)
    _register_process_tools(server, store, limits, locations)
    _register_resources(server, store)

    # The diagnostics engineer's module adds diagnose_run and get_metric_alerts.
    from mcp_server import diagnostic_tools

    diagnostic_tools.register(server, store)
    from mcp_server import experiment_tools

    experiment_tools.register(server, store, limits, locations)
    from mcp_server import resume_tools

    resume_tools.register(server, store, limits, locations)
    from mcp_server import import_tools

    import_tools.register(server, store)
    from mcp_server import sweep_tools

    sweep_tools.register(server, store, limits, locations)
    from mcp_server import ops_tools

    ops_tools.register(server, store, limits)
    return server


def _register_config_tools(server: MCPServer, store: rs.RunStore) -> None:
    @tool(server, READ_ONLY, store.runs_dir)
    def list_environments(
        filter: Annotated[str | None, Field(max_length=100, description="only registered ids containing this text "
                                            "(case-insensitive), e.g. 'MountainCar'; implies registered")] = None,
        registered: Annotated[bool, Field(description="also list registered Gymnasium ids (400+ with every "
                                          "extra: page with offset/limit)")] = False,
        offset: Annotated[int, Field(ge=0, le=100_000, description="skip this many registered ids")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_CATALOG_ROWS, description="registered ids per page")] = 50,
    ) -> EnvironmentList:
        """List the environments that have training presets, with their variants (ENV:VARIANT ids); with
        registered=true or a filter, also every environment id Gymnasium registers and where its settings
        would come from: our preset, the RL Zoo's tuned entry (zoo_algos), or gsolve's defaults only.

        Any registered id trains with start_training('ENV:ALGO') or a bare 'ENV' (algorithm chosen from its
        spaces); get_config shows the resolved settings with each value's source.
        """
        out = []
        for env_id in config_mod.list_env_files():
            try:
                preset = config_mod.load_preset(env_id)
                variants = config_mod.list_variants(env_id)
            except config_mod.ConfigError as exc:
                out.append(EnvironmentPreset(env_id=env_id, description=f"preset is broken: {exc}", variants={},
                                             config_ids=[]))
                continue
            out.append(EnvironmentPreset(env_id=preset.env_id, description=preset.description, variants=variants,
                                         config_ids=[f"{env_id}:{v}" for v in variants]))
        result = EnvironmentList(environments=out, config_dir=str(config_mod.config_dir()))
        if registered or filter is not None:
            catalog = environment_catalog(filter, offset=offset, limit=limit)
            result.registered = [RegisteredEnvironment(env_id=e.env_id, settings=e.settings,
                                                       preset_variants=e.preset_variants, zoo_algos=e.zoo_algos)
                                 for e in catalog.environments]
            result.registered_total = catalog.total
            end = offset + len(result.registered)
            result.note = (f"registered ids {offset + 1}-{end} of {catalog.total}"
                           + (f"; next page: offset={end}" if end < catalog.total else ""))
        return result

    @tool(server, READ_ONLY, store.runs_dir)
    def list_variants(env_id: Annotated[str, Field(description="Gymnasium id, e.g. 'CartPole-v1'")]) -> VariantList:
        """List one environment's preset variants with their algorithm and key settings."""
        preset = config_mod.load_preset(env_id)
        out = []
        for name, algo in config_mod.list_variants(env_id).items():
            cid = f"{preset.env_id}:{name}"
            try:
                cfg = config_mod.resolve_config(cid).model_dump(mode="json")
                settings: dict[str, Any] = {k: cfg[k] for k in ("max_env_steps", "reward_threshold")}
                settings.update(rs.key_hyperparameters(cfg))
                out.append(VariantInfo(variant=name, config_id=cid, algo=algo, settings=settings))
            except config_mod.ConfigError as exc:
                out.append(VariantInfo(variant=name, config_id=cid, algo=algo, settings={}, problem=str(exc)))
        return VariantList(env_id=preset.env_id, variants=out)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_config(
        config_id: Annotated[str | None, Field(description="ENV:VARIANT preset, e.g. 'CartPole-v1:ppo'")] = None,
        run_id: Annotated[str | None, Field(description="instead of config_id: a run whose config to show")] = None,
        overrides: Annotated[
            dict[str, Any] | None,
            Field(description="with config_id: settings to change, e.g. {'learning_rate': 0.001}; validated"),
        ] = None,
    ) -> ConfigResult:
        """Return a fully resolved, validated config: a preset (plus overrides, to check them before
        start_training) or the exact config a run used. Every key with its meaning."""
        if (config_id is None) == (run_id is None):
            raise ValueError("pass exactly one of config_id (e.g. 'CartPole-v1:ppo') or run_id")
        if run_id is not None:
            if overrides:
                raise ValueError("overrides apply to a preset (config_id), not to a finished run's config")
            run_dir = store.resolve(run_id)
            cfg = store.config(run_dir)
            cid = f"{cfg.get('env_id')}:{cfg.get('variant')}"
            origin = store.info(run_dir).config_origin
            return ConfigResult(source="run", config_id=cid, run_id=run_dir.name, config=cfg,
                                descriptions=_CONFIG_DESCRIPTIONS,
                                settings_from=None if origin is None else f"{origin.settings}: {origin.where}",
                                value_sources={} if origin is None else origin.sources,
                                notes=[] if origin is None else origin.notes)
        assert config_id is not None
        pairs = launcher._override_pairs(overrides or {})
        resolved = config_mod.resolve_with_origin(config_id, pairs)
        cfg_out, origin = resolved.config, resolved.origin
        return ConfigResult(source="preset", config_id=cfg_out.config_id, config=cfg_out.model_dump(mode="json"),
                            descriptions=_CONFIG_DESCRIPTIONS, settings_from=f"{origin.settings}: {origin.where}",
                            value_sources=origin.sources, notes=origin.notes)



def _register_run_tools(server: MCPServer, store: rs.RunStore) -> None:
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
        """List training runs, newest first, with status, progress, best/final eval return and whether
        they solved the environment. Filter by environment, algorithm, status or solved; page with cursor."""
        return rs.list_runs(store, env_id, algo, status, solved, limit, cursor)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_run_info(run_id: RunRef) -> rs.RunDetails:
        """Everything about one run on one screen: status (crashed detection included), stop reason and
        structured failure, progress, best and final evaluation, solved and when, the key hyperparameters
        that apply to its algorithm, every config key that differs from its preset (value and preset
        value), overrides, and which files are present or malformed."""
        return rs.run_details(store, store.resolve(run_id))

    @tool(server, READ_ONLY, store.runs_dir)
    def get_run_metrics(
        run_id: RunRef,
        metrics: Annotated[
            list[str] | None,
            Field(description=f"metric columns to return; default: {', '.join(rs.DEFAULT_METRICS)}. "
                  "list_available_metrics shows all"),
        ] = None,
        start_env_steps: Annotated[int | None, Field(ge=0, description="only rows at or after this env step")] = None,
        end_env_steps: Annotated[int | None, Field(ge=0, description="only rows at or before this env step")] = None,
        max_points: Annotated[
            int, Field(ge=10, le=rs.MAX_POINTS_PER_SERIES, description="points per metric after downsampling")
        ] = 200,
    ) -> rs.MetricsResult:
        """Training curves of a run against env steps: per metric, parallel arrays env_steps and values
        (rounded), first/last/min/max and where, and the env steps of nan/inf values.

        Long series are downsampled keeping each bucket's min and max, so spikes stay visible; the
        note says which were cut: narrow the range or raise max_points for detail. What each metric
        means: list_available_metrics (not repeated here)."""
        return rs.query_metrics(store, store.resolve(run_id), metrics, start_env_steps, end_env_steps, max_points)

    @tool(server, READ_ONLY, store.runs_dir)
    def list_available_metrics(run_id: RunRef) -> rs.MetricList:
        """The metric columns this run wrote, what each means, how many rows measured it and its last value."""
        return rs.available_metrics(store, store.resolve(run_id))

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
        """The end of a run's run.log (warnings, errors, tracebacks, the launcher's command line),
        optionally filtered by level or text. Bounded; the note says what was left out."""
        return rs.tail_log(store.resolve(run_id), limit, level, contains)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_training_status(run_id: RunRef) -> rs.TrainingStatus:
        """Live status of a run: running/completed/failed/stopped/crashed, env steps and progress,
        fps and ETA, heartbeat age, latest and best eval return, solved. Cheap; call it any time."""
        return rs.training_status(store, store.resolve(run_id))

    @tool(server, READ_ONLY, store.runs_dir)
    def list_checkpoints(run_id: RunRef) -> rs.CheckpointList:
        """A run's saved checkpoints with their role ('best', 'last', 'periodic' step_<env_steps>,
        'top_eval' eval_<env_steps> = one of the keep_best_checkpoints best evaluations, with its rank),
        env steps, eval return, wall seconds, iteration and whether the weights file exists. Each name
        works with `gsolve eval RUN --checkpoint NAME`."""
        return rs.list_checkpoints(store.resolve(run_id))

    @tool(server, READ_ONLY, store.runs_dir)
    def compare_runs(
        run_ids: Annotated[list[str], Field(min_length=2, max_length=rs.MAX_COMPARE, description="2 to 10 run refs")],
    ) -> rs.Comparison:
        """Compare runs side by side: config keys that differ, best and final eval return, status, and
        which run reached its reward threshold first in env steps and in wall time."""
        return rs.compare_runs(store, run_ids)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_best_run(
        env_id: Annotated[str, Field(description="Gymnasium id, e.g. 'CartPole-v1'")],
        algo: Annotated[config_mod.Algo | None, Field(description="only this algorithm")] = None,
    ) -> rs.BestRun:
        """The best run for an environment (solved in the fewest env steps, else highest eval return)
        and the top 5, to find a good baseline config."""
        return rs.best_run(store, env_id, algo)



def _register_plot_tools(server: MCPServer, store: rs.RunStore) -> None:
    @tool(server, READ_ONLY, store.runs_dir)
    def plot_run_metric(
        run_id: RunRef,
        metric: MetricName = rf.M.EVAL_RETURN_MEAN,
        start_env_steps: Annotated[int | None, Field(ge=0, description="plot from this env step")] = None,
        end_env_steps: Annotated[int | None, Field(ge=0, description="plot up to this env step")] = None,
    ) -> Annotated[CallToolResult, plotting.PlotResult]:
        """A PNG plot of one metric of a run against env steps (reward threshold drawn for returns), with
        a one-paragraph description of the curve: start, end, extremes, recent trend, non-finite values."""
        png, result = plotting.plot_run_metric(store, store.resolve(run_id), metric, start_env_steps, end_env_steps)
        return _png_result(png, result, result.summary)

    @tool(server, READ_ONLY, store.runs_dir)
    def plot_compare_runs(
        run_ids: Annotated[list[str], Field(min_length=1, max_length=rs.MAX_COMPARE, description="1 to 10 run refs")],
        metric: MetricName = rf.M.EVAL_RETURN_MEAN,
    ) -> Annotated[CallToolResult, plotting.PlotResult]:
        """A PNG plot of one metric for several runs on shared axes, with a description of each curve
        and which run peaked highest."""
        dirs: list[Path] = []
        for ref in run_ids:
            d = store.resolve(ref)
            if d not in dirs:
                dirs.append(d)
        png, result = plotting.plot_compare_runs(store, dirs, metric)
        return _png_result(png, result, result.summary)



def _register_process_tools(server: MCPServer, store: rs.RunStore, limits: launcher.StartLimits,
                            locations: LocationPolicy) -> None:
    @tool(server, STARTS_PROCESS, store.runs_dir)
    def start_training(
        config_id: Annotated[str, Field(max_length=200, description="ENV:VARIANT preset, e.g. 'CartPole-v1:ppo', "
                                        "ENV:ALGO for any registered environment, e.g. 'MountainCar-v0:dqn', or a bare "
                                        "ENV (algorithm chosen from its spaces); see list_environments")],
        overrides: Annotated[
            dict[str, Any] | None,
            Field(description="config keys to change, e.g. {'learning_rate': 0.0005, 'max_env_steps': 100000}; "
                  "schedules as {'start': x, 'end': y}"),
        ] = None,
    ) -> launcher.StartResult:
        """Start a training run in the background and return its run_id at once. Any registered Gymnasium
        environment: settings from our preset, else the RL Zoo's tuned entry, else gsolve's defaults
        (settings_from says which). The config is validated first (a bad key or value, an environment this
        machine cannot create, or an algorithm that cannot take its spaces is reported with what is allowed). The process is detached: it keeps
        running if this server stops; its output goes to the run's log. Follow it with wait_for_training.
        mlflow_tracking_uri may name only a folder inside the runs folder or what the server's operator allowed."""
        cfg = config_mod.resolve_config(config_id, launcher.override_pairs(overrides or {}))
        locations.check_config(cfg.model_dump(mode="json"), store.runs_dir, cfg.config_id)
        result = launcher.start_training(store.runs_dir, config_id, overrides, limits)
        log.info("started run %s (%s) pid %s", result.run_id, result.config_id, result.pid)
        return result

    @tool(server, STOPS_PROCESS, store.runs_dir)
    async def stop_training(
        run_id: RunRef,
        timeout_seconds: Annotated[
            float, Field(ge=1, le=launcher.MAX_STOP_TIMEOUT, description="grace period before SIGKILL")
        ] = 20.0,
    ) -> launcher.StopResult:
        """Stop a running training: asks it to stop gracefully (final evaluation and checkpoint, status
        'stopped', reason 'user_stopped'); if it has not exited after timeout_seconds it is killed and the
        forced stop is recorded. A run that is not running is left alone."""
        return await launcher.stop_training(store, store.resolve(run_id), timeout_seconds)

    @tool(server, READ_ONLY, store.runs_dir)
    async def wait_for_training(
        run_id: RunRef,
        ctx: Context,
        timeout_seconds: Annotated[
            float, Field(ge=0, le=launcher.MAX_WAIT_SECONDS, description="wait at most this long (max 60)")
        ] = 30.0,
    ) -> launcher.WaitResult:
        """Wait (at most timeout_seconds, max 60) for a run to finish, sending progress notifications;
        returns the current status either way. If 'finished' is false, call it again to keep waiting."""

        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.report_progress(done, total, message)

        return await launcher.wait_for_training(store, store.resolve(run_id), timeout_seconds, progress)



def _register_resources(server: MCPServer, store: rs.RunStore) -> None:
    @server.resource("gsolve://runs/{run_id}/config", mime_type="application/yaml",
                     description="the fully resolved config.yaml of a run")
    @resource_errors(store.runs_dir)
    def run_config_resource(run_id: str) -> str:
        run_dir = store.resolve(run_id)
        store.config(run_dir)  # validates it parses
        return (run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8")

    @server.resource("gsolve://runs/{run_id}/metrics", mime_type="application/json",
                     description="a run's default metric curves, downsampled (get_run_metrics for more)")
    @resource_errors(store.runs_dir)
    def run_metrics_resource(run_id: str) -> str:
        return rs.query_metrics(store, store.resolve(run_id)).model_dump_json()

    @server.prompt(description="the step-by-step workflow for debugging one training run")
    def debug_run(run_id: str = "@last") -> str:
        return DEBUG_RUN_PROMPT.format(run_id=run_id)


DEBUG_RUN_PROMPT = """Debug the gymnasium-solver training run {run_id}.

1. Call diagnose_run(run_id="{run_id}") first: it returns the findings (with evidence) for the run.
2. Call get_run_info for status, stop reason, structured failure, best/final evaluation, threshold
   and key hyperparameters. If status is 'crashed' or 'failed', read get_run_logs(level="WARNING").
3. Call get_run_metrics for the curves behind each finding (eval/return_mean, rollout/ep_return_mean,
   train/approx_kl, train/clip_fraction, train/entropy, train/explained_variance, train/grad_norm);
   plot_run_metric if a picture helps the user.
4. Find a reference: get_best_run for the same environment, then compare_runs to see which config
   keys differ and who reached the threshold first.
5. Report: what happened (numbers, env steps), the most likely cause with its evidence, and concrete
   config changes (key=value) ranked by expected impact. Offer start_training with those overrides.
"""


def main(
    transport: str = "stdio",
    port: int = 8765,
    runs_dir: Path | str | None = None,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    limits: launcher.StartLimits | None = None,
    locations: LocationPolicy | None = None,
    session_idle_timeout: float | None = None,
    max_sessions: int | None = None,
) -> None:
    """Run the server (``gsolve mcp``): stdio by default, or streamable HTTP on host:port, where a
    token makes every request carry ``Authorization: Bearer <token>`` (required off loopback), and a
    session idle for ``session_idle_timeout`` seconds is closed, with at most ``max_sessions`` open
    (None: 900 s and 100)."""
    session_idle_timeout = DEFAULT_SESSION_IDLE_SECONDS if session_idle_timeout is None else session_idle_timeout
    max_sessions = DEFAULT_MAX_SESSIONS if max_sessions is None else max_sessions
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'http'")
    if transport == "http":
        check_bind(host, token)  # before anything starts: a refused bind is a clear error, not a log line
        check_session_limits(session_idle_timeout, max_sessions)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if transport == "http" and (warning := bind_warning(host)):
        log.warning("%s", warning)
    limits = limits or launcher.StartLimits.from_options()
    locations = locations or LocationPolicy.from_options()
    # Every process this server starts (trainers, gsolve fix, sweeps) inherits the confinement, and
    # the MLflow sink checks it again before it connects (gymnasium_solver/locations.py).
    os.environ.update(locations.as_env())
    server = create_server(runs_dir, limits, locations)
    log.info("gymnasium-solver MCP server over %s, runs folder %s; starts at most %d live runs, max_env_steps <= %d, "
             "n_envs <= %d", transport, rs.RunStore(runs_dir).runs_dir.resolve(), limits.max_live_runs,
             limits.max_env_steps, limits.max_n_envs)
    log.info("runs it starts log to MLflow only at the default store, inside the runs folder%s",
             f" or below {', '.join(locations.tracking_uris)} (--allow-tracking-uri)" if locations.tracking_uris else "")
    if transport == "stdio":
        server.run("stdio")
        return
    import anyio
    import uvicorn

    app: Any = server.streamable_http_app(host=host, session_idle_timeout=session_idle_timeout,
                                          max_sessions=max_sessions)
    if token is not None:
        app = BearerAuth(app, token)
    log.info("HTTP on %s:%d/mcp, %s; sessions idle for %gs are closed, at most %d open", host, port,
             "bearer token required" if token else "no token (loopback only)", session_idle_timeout, max_sessions)
    # No access log: a line per call on stderr costs the event loop ~0.3 ms under load (issue 8).
    # Keep-alive longer than clients' own idle expiry (httpx: 5 s): otherwise the server may close a
    # connection just as a client reuses it, which the client sees as a failed call.
    config = uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False, timeout_keep_alive=75)
    anyio.run(uvicorn.Server(config).serve)
