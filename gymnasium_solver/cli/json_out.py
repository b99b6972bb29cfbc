"""`--json`: which pydantic model each `gsolve` command prints (the one its MCP tool returns), declared
once, and `gsolve schema COMMAND`, which prints that model's JSON schema.

Models are named as "module:attribute" and imported only when asked, so that `gsolve runs` does not pay
for the diagnostics' or the sweeps' imports.
"""

from __future__ import annotations

import argparse
import importlib
import json
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

from gymnasium_solver.cli.error import CliError

# command -> the model its --json prints (docs/cli.md lists them; tests/test_cli_json.py validates each).
JSON_MODELS: dict[str, str] = {
    "runs": "gymnasium_solver.run_store:RunList",
    "show": "gymnasium_solver.run_store:RunDetails",
    "compare": "gymnasium_solver.run_store.compare:CompareOutput",  # Comparison; with --env, BestRun
    "checkpoints": "gymnasium_solver.run_store:CheckpointList",
    "plot": "gymnasium_solver.plotting:GroupPlotResult",
    "config": "gymnasium_solver.config.view:ConfigResult",
    "list-envs": "gymnasium_solver.environment_list:EnvironmentList",
    "train": "gymnasium_solver.jobs.seed_runs:TrainOutput",  # RunDetails; with --seeds, SeedRuns
    "eval": "gymnasium_solver.train.policy_eval:EvalReport",
    "diagnose": "gymnasium_solver.diagnostics:Diagnosis",
    "retry": "gymnasium_solver.experiments.retry:RetryResult",
    "fix": "gymnasium_solver.experiments.record:ExperimentRecord",
    "sweep": "gymnasium_solver.sweeps.report:SweepSummary",
    "sweep-status": "gymnasium_solver.sweeps.report:SweepSummary",  # without SWEEP_ID: a list of SweepListItem
    "sweep-check": "gymnasium_solver.sweeps.check:SweepCheck",
    "import": "gymnasium_solver.imports:ImportResult",
    "check": "gymnasium_solver.ops.regression:RegressionCheck",
    "promote": "gymnasium_solver.ops.registry_records:Decision",
    "models": "gymnasium_solver.ops.model_registry:ModelList",
    "rollback": "gymnasium_solver.ops.registry_records:Decision",
    "presets save": "gymnasium_solver.config.presets:SavedPreset",
}

# Commands that print no result, so take no --json (tests/test_cli_scripts.py fails on any other command
# without --json): each serves until stopped, or prints a JSON schema already.
NO_JSON: dict[str, str] = {
    "mcp": "runs the MCP server on stdio or HTTP until stopped",
    "serve-metrics": "serves /metrics to Prometheus until stopped",
    "schema": "prints a JSON schema (or the list of commands with --json) already",
}


@cache
def json_model(command: str) -> type[BaseModel]:
    """The model `gsolve COMMAND --json` prints."""
    module, _, name = JSON_MODELS[command].partition(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


def json_schema(command: str) -> dict[str, Any]:
    """The JSON schema of `gsolve COMMAND --json` (sweep-status without an id: an array of sweeps)."""
    return json_model(command).model_json_schema()


def list_schema() -> dict[str, Any]:
    from gymnasium_solver.sweeps.report import SweepListItem

    return TypeAdapter(list[SweepListItem]).json_schema()


def emit(result: BaseModel) -> None:
    """Print a command's result as JSON: the model, nothing else on stdout."""
    print(result.model_dump_json(indent=2))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("schema", help="print the JSON schema of a command's --json output",
                       description="The JSON schema (draft 2020-12, from the pydantic model) that `gsolve COMMAND "
                       "--json` prints; without COMMAND, which model each command prints.")
    p.add_argument("name", metavar="COMMAND", nargs="*", default=[],
                   help=f"one of {', '.join(JSON_MODELS)} (a subcommand's words apart: schema presets save)")
    p.set_defaults(func=cmd_schema)


def cmd_schema(args: argparse.Namespace) -> int:
    args.name = " ".join(args.name) or None
    if args.name is None:
        width = max(map(len, JSON_MODELS))
        for command, model in JSON_MODELS.items():
            print(f"{command:<{width}}  {model}")
        return 0
    if args.name not in JSON_MODELS:
        import difflib

        close = difflib.get_close_matches(args.name, list(JSON_MODELS), n=2)
        raise CliError(f"no --json output for {args.name!r}" + (f"; did you mean {' or '.join(close)}?" if close else
                                                                 f"; commands with --json: {', '.join(JSON_MODELS)}"))
    print(json.dumps(json_schema(args.name), indent=2))
    return 0
