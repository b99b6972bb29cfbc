"""The gymnasium-solver MCP server: 20 tools an assistant needs to find, inspect, diagnose, fix,
compare, plot, start, watch, stop, tune and promote training runs (docs/mcp.md lists them, with
the CLI command and Python call of each use case).

Each tool is a thin adapter over a plain function in ``gymnasium_solver`` (tested directly and
through ``mcp.Client``), declared in the module of its area (run_tools, diagnostic_tools, ...).
Results are pydantic models: Claude Code shows the model only the structured content, so
everything needed is in it, and every result is bounded (long series are downsampled, logs tailed)
and says what it left out. The schemas ``tools/list`` publishes are compacted (schemas.py).

Nothing here imports torch (or gymnasium at start): the server must start in well under a second.
Logging goes to stderr only; stdout belongs to the stdio transport.
"""

import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool as MCPTool
from pydantic import Field, ValidationError

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher
from gymnasium_solver import run_store as rs
from gymnasium_solver.config import env_modules
from gymnasium_solver.config.catalog import MAX_CATALOG_ROWS
from gymnasium_solver.config.view import ConfigResult, config_descriptions, resolved_config_result
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.locations import LocationPolicy
from gymnasium_solver.environment_list import EnvironmentList, environment_list
from gymnasium_solver.run_store.metrics import map_large_buffers
from mcp_server import (
    diagnostic_tools,
    experiment_tools,
    import_tools,
    ops_tools,
    run_tools,
    sweep_tools,
    training_tools,
)
from mcp_server.common import READ_ONLY, describe_argument_errors, resource_errors, result_in_tool_terms, tool
from mcp_server.http_auth import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_SECONDS,
    BearerAuth,
    bind_warning,
    check_bind,
    check_session_limits,
)
from mcp_server.schemas import compact_input, compact_output

log = logging.getLogger("gymnasium_solver.mcp")

SERVER_NAME = "gymnasium-solver"
INSTRUCTIONS = (
    "Inspect, compare, diagnose, fix, start and stop reinforcement-learning training runs of gymnasium-solver. "
    "Runs are referenced by run id, a unique prefix of one, or '@last' (the newest run, fix and sweep trials aside). "
    "Start a debugging session with diagnose_run, then get_run_info / get_run_metrics / get_run_logs "
    "for evidence, and fix_run to prove a fix over seeds. Step counts are environment steps."
)


class GsolveServer(MCPServer):
    """The SDK's server with compact published schemas (mcp_server/schemas.py): ``tools/list`` is read
    into every conversation, so it is kept under 40 KB; calls still validate against the full models."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compact: dict[str, MCPTool] = {}  # tool name -> its published form, compacted once

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The SDK's call, after refusing arguments the tool does not take: pydantic would drop them, and a
        misspelled filter (``contains`` for ``filter``) would answer a question nobody asked."""
        tool = self._tool_manager.get_tool(name)
        if tool is not None and isinstance(arguments, dict):
            known = set(tool.parameters.get("properties", {}))
            if unknown := sorted(set(arguments) - known):
                raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))}; its arguments: "
                                f"{', '.join(sorted(known)) or 'none'}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # the arguments failed the input schema
                raise ToolError(describe_argument_errors(name, exc.__cause__)) from None
            raise

    async def list_tools(self) -> list[MCPTool]:
        out = []
        for t in await super().list_tools():
            if t.name not in self._compact:
                self._compact[t.name] = t.model_copy(update={"input_schema": compact_input(t.input_schema),
                                                             "output_schema": compact_output(t.output_schema)})
            out.append(self._compact[t.name])
        return out


# ---------------------------------------------------------------------------------------------
def create_server(runs_dir: Path | str | None = None, limits: launcher.StartLimits | None = None,
                  locations: LocationPolicy | None = None) -> MCPServer:
    """Build the server over the runs folder (None: $GSOLVE_RUNS_DIR, else ./runs). ``limits`` caps the
    runs it starts (live runs at once, budget, sub-environments); None: the defaults. ``locations``: where
    the runs it starts may log (None: the default store and the runs folder only; never unconfined)."""
    store = rs.RunStore(runs_dir)
    # A preset naming env_package/env_class is refused unless the operator granted it (gsolve mcp --env-package):
    # a client choosing a config id must not make the server import a module.
    env_modules.distrust_presets()
    # Its own --env-class classes get ids a client can name (CLASS-v0); its --env-package ids are registered already.
    env_modules.bind_granted_classes()
    map_large_buffers()  # a long-lived reader: freed parse buffers go back to the system
    limits = limits or launcher.StartLimits.from_options()
    locations = locations or LocationPolicy.from_options()
    server: MCPServer = GsolveServer(SERVER_NAME, instructions=INSTRUCTIONS)
    # The order tools are listed in: find, read, diagnose and prove, train, tune, operate.
    _register_config_tools(server, store)
    run_tools.register(server, store)
    diagnostic_tools.register(server, store)
    experiment_tools.register(server, store, limits, locations)
    training_tools.register(server, store, limits, locations)
    import_tools.register(server, store)
    sweep_tools.register(server, store, limits, locations)
    ops_tools.register(server, store, limits)
    _register_resources(server, store)
    return server


def _register_config_tools(server: MCPServer, store: rs.RunStore) -> None:
    @tool(server, READ_ONLY, store.runs_dir)
    def list_environments(
        env_id: Annotated[str | None, Field(max_length=100, description="one environment: its preset's variants, "
                                            "or without a preset each ENV:ALGO that takes it, with key settings")] = None,
        filter: Annotated[str | None, Field(max_length=100, description="only registered ids containing this text "
                                            "(case-insensitive), e.g. 'MountainCar'; implies registered")] = None,
        registered: Annotated[bool, Field(description="also list registered Gymnasium ids (400+ with every "
                                          "extra: page with offset/limit)")] = False,
        offset: Annotated[int, Field(ge=0, le=100_000, description="skip this many registered ids")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_CATALOG_ROWS, description="registered ids per page")] = 50,
    ) -> EnvironmentList:
        """Use to find what can be trained: the environments with presets and their ENV:VARIANT ids (with
        env_id, that environment's variants and key settings); with registered=true or a filter, every
        registered Gymnasium id and whether its settings come from our preset, the RL Zoo or defaults; `own`: the
        ids the operator's --env-class (a user's class, as CLASS-v0) or --env-package made trainable."""
        return environment_list(env_id, filter, registered, offset, limit)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_config(
        config_id: Annotated[str | None, Field(description="ENV:VARIANT preset, e.g. 'CartPole-v1:ppo'")] = None,
        run_id: Annotated[str | None, Field(description="instead of config_id: a run whose config to show")] = None,
        overrides: Annotated[
            dict[str, Any] | None,
            Field(description="with config_id: settings to change, e.g. {'learning_rate': 0.001}; validated"),
        ] = None,
        zoo: Annotated[bool, Field(description="false: without the RL Zoo's entry, as start_training(zoo=false)")] = True,
    ) -> ConfigResult:
        """Use to check overrides before start_training, or to see the exact config a run used: the fully
        resolved, validated config with each key's meaning and where each value came from."""
        if (config_id is None) == (run_id is None):
            raise ValueError("pass exactly one of config_id (e.g. 'CartPole-v1:ppo') or run_id")
        if run_id is not None:
            if overrides:
                raise ValueError("overrides apply to a preset (config_id), not to a finished run's config")
            run_dir = store.resolve(run_id)
            cfg = store.config(run_dir)
            cid = f"{cfg.get('env_id')}:{cfg.get('variant')}"
            origin = store.info(run_dir).config_origin
            result = ConfigResult(source="run", config_id=cid, run_id=run_dir.name, config=cfg,
                                  descriptions=config_descriptions(),
                                  settings_from=None if origin is None else f"{origin.settings}: {origin.where}",
                                  value_sources={} if origin is None else origin.sources,
                                  notes=[] if origin is None else origin.notes)
        else:
            assert config_id is not None
            pairs = launcher._override_pairs(overrides or {})
            result = resolved_config_result(config_mod.resolve_with_origin(config_id, pairs, use_zoo=zoo))
        return result_in_tool_terms(result)  # its notes and descriptions say `--set`: here, `overrides`


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
   plot_runs if a picture helps the user; get_run_info(view="frames") shows a few frames of an
   episode of its best checkpoint when the policy learned something odd (e.g. it hovers or spins).
4. Prove the fix: fix_run(run_id="{run_id}") trains the suggested changes over seeds; poll
   get_fix(experiment_id) until done. For a reference, compare_runs(env_id=...) ranks the runs of the
   same environment and compare_runs(run_ids=[...]) shows which config keys differ.
5. Report: what happened (numbers, env steps), the most likely cause with its evidence, and the
   config changes (key=value) that fix_run verified. Offer start_training with those overrides.
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
    # the MLflow sink checks it again before it connects (gymnasium_solver/contract/locations.py).
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
    # No access log: a line per call on stderr costs the event loop ~0.3 ms under load (measured with
    # bench/bench_mcp_load.py).
    # Keep-alive longer than clients' own idle expiry (httpx: 5 s): otherwise the server may close a
    # connection just as a client reuses it, which the client sees as a failed call.
    config = uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False, timeout_keep_alive=75)
    anyio.run(uvicorn.Server(config).serve)
