"""Several runs side by side: results, config differences and who solved first."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, RootModel

from gymnasium_solver.run_store.details import run_details
from gymnasium_solver.run_store.files import RunFileError
from gymnasium_solver.run_store.groups import BestRun, SeedGroup, group_runs, select_runs
from gymnasium_solver.run_store.limits import MAX_COMPARE
from gymnasium_solver.run_store.store import RunStore


class ComparedRun(BaseModel):
    run_id: str
    config_id: str | None
    status: str
    env_steps: int
    wall_seconds: float | None
    best_eval_return: float | None
    final_eval_return: float | None
    solved: bool
    solved_at_env_steps: int | None
    solved_at_wall_seconds: float | None
    problem: str | None = None


class ConfigDifference(BaseModel):
    key: str
    values: dict[str, Any] = Field(description="run_id -> value ('<missing>' if the run has no such key)")


class Comparison(BaseModel):
    runs: list[ComparedRun]
    config_differences: list[ConfigDifference] = Field(description="only keys whose values differ")
    identical_config_keys: int
    first_to_threshold_env_steps: str | None = Field(
        default=None, description="run_id that reached its reward threshold in the fewest env steps"
    )
    first_to_threshold_wall_time: str | None = Field(
        default=None, description="run_id that reached its reward threshold in the least wall time"
    )
    best_eval_return: str | None = Field(default=None, description="run_id with the highest best eval return")
    groups: list[SeedGroup] = Field(default_factory=list, description="when some runs share a config but the seed: "
                                    "one entry per config with its results over seeds (solved k of n, spread)")
    note: str = ""


def compare_runs(store: RunStore, refs: list[str], max_runs: int | None = MAX_COMPARE) -> Comparison:
    """Config differences and best/final results of 2..``max_runs`` runs side by side (None: no cap),
    who solved first, and the runs grouped by config over seeds. A ref is a run or ENV:VARIANT (its runs)."""
    if not isinstance(refs, list) or not refs or (max_runs is not None and len(refs) > max_runs):
        raise ValueError(f"compare between 2 and {max_runs} runs, got {len(refs) if isinstance(refs, list) else refs!r}")
    dirs = select_runs(store, refs)
    if max_runs is not None and len(dirs) > max_runs:
        raise ValueError(f"{refs} name {len(dirs)} runs; compare at most {max_runs} at once (`gsolve compare` has no cap)")
    if len(dirs) < 2:
        raise ValueError(f"{refs} name {'the same run' if len(refs) > 1 else 'one run'} ({dirs[0].name}); pass at "
                         "least two different runs")
    runs: list[ComparedRun] = []
    configs: dict[str, dict[str, Any]] = {}
    notes = []
    for d in dirs:
        details = run_details(store, d)
        s = details.summary
        runs.append(ComparedRun(
            run_id=s.run_id, config_id=s.config_id, status=s.status, env_steps=s.env_steps,
            wall_seconds=details.wall_seconds, best_eval_return=s.best_eval_return,
            final_eval_return=s.final_eval_return, solved=s.solved, solved_at_env_steps=s.solved_at_env_steps,
            solved_at_wall_seconds=s.solved_at_wall_seconds, problem=s.problem,
        ))
        try:
            configs[d.name] = store.config(d)
        except RunFileError as exc:
            notes.append(str(exc))
    keys = sorted({k for c in configs.values() for k in c})
    diffs = []
    for k in keys:
        vals = {rid: c.get(k, "<missing>") for rid, c in configs.items()}
        if len({repr(v) for v in vals.values()}) > 1:
            diffs.append(ConfigDifference(key=k, values=vals))
    solved = [r for r in runs if r.solved and r.solved_at_env_steps is not None]
    out = Comparison(runs=runs, config_differences=diffs, identical_config_keys=len(keys) - len(diffs))
    if solved:
        out.first_to_threshold_env_steps = min(solved, key=lambda r: r.solved_at_env_steps or 0).run_id
        timed = [r for r in solved if r.solved_at_wall_seconds is not None]
        if timed:
            out.first_to_threshold_wall_time = min(timed, key=lambda r: r.solved_at_wall_seconds or 0.0).run_id
    else:
        notes.append("none of these runs reached its reward threshold")
    scored = [r for r in runs if r.best_eval_return is not None]
    if scored:
        out.best_eval_return = max(scored, key=lambda r: r.best_eval_return or 0.0).run_id
    envs = {r.config_id.split(":")[0] for r in runs if r.config_id}
    if len(envs) > 1:
        notes.append(f"these runs are on different environments ({', '.join(sorted(envs))}); returns are not comparable")
    if len(dirs) > len(groups := group_runs(store, dirs)):
        out.groups = groups
    out.note = "; ".join(notes)
    return out


class CompareOutput(RootModel[Comparison | BestRun]):
    """What `gsolve compare --json` prints: the runs' Comparison, or with --env the environment's BestRun."""
