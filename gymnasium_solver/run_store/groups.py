"""Runs of one config over seeds: selecting them (run refs or ENV:VARIANT) and grouping them."""

from __future__ import annotations

import difflib
import statistics
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.config.presets import yaml_value
from gymnasium_solver.config.registry import RECORDING_KEYS
from gymnasium_solver.jobs.seeds import Spread, spread
from gymnasium_solver.run_store.files import RunFileError
from gymnasium_solver.run_store.store import RunStore
from gymnasium_solver.run_store.summaries import RunKind, RunSummary, is_kind, summarize_run

# Keys that differ between seeds of one config without making it another config: the seed, and what a run only
# writes elsewhere or measures besides (tensorboard, grad_norm_parts, ...): its training is the same.
SAME_CONFIG_KEYS = ("seed", *RECORDING_KEYS)


def is_config_ref(ref: str) -> bool:
    """ENV:VARIANT (a run id never holds a colon)."""
    return ":" in ref and not ref.startswith("@")


def select_runs(store: RunStore, refs: list[str]) -> list[Path]:
    """The run folders ``refs`` name, in order, without repeats: each a run (id, unique prefix, @last)
    or ENV:VARIANT for every run of that config someone started (fix / sweep trials left out).
    RunNotFoundError / ValueError for a ref that names nothing, with the configs that have runs."""
    dirs: list[Path] = []
    summaries: list[RunSummary] | None = None
    for ref in refs:
        if is_config_ref(ref):
            if summaries is None:
                summaries = [summarize_run(store, store.runs_dir / i) for i in store.run_ids()]
            found = [store.runs_dir / s.run_id for s in summaries if s.config_id == ref and is_kind(s, RunKind.TRAIN)]
            if not found:
                known = sorted({s.config_id for s in summaries if s.config_id and is_kind(s, RunKind.TRAIN)})
                close = difflib.get_close_matches(ref, known, n=3, cutoff=0.5)
                hint = f"; did you mean {' or '.join(close)}?" if close else "."
                raise ValueError(f"no runs of {ref!r} in {store.runs_dir}{hint} Configs with runs: "
                                 f"{', '.join(known) or 'none'}")
        else:
            found = [store.resolve(ref)]
        dirs.extend(d for d in found if d not in dirs)
    return dirs


class SeedGroup(BaseModel):
    """Runs of one config (the same resolved config but for the seed and SAME_CONFIG_KEYS): results over seeds."""

    label: str = Field(description="config id, plus the keys that set this group apart from the other groups of "
                       "its config id")
    config_id: str | None
    run_ids: list[str]
    seeds: list[int | None]
    solved: int = Field(description="runs that reached the reward threshold (of len(run_ids))")
    best_eval_mean: float | None = Field(description="mean over the runs of each run's best eval return")
    best_eval_min: float | None
    best_eval_max: float | None
    steps_to_solve_median: float | None = Field(description="median env steps to solve over the solved runs")
    steps_to_solve_max: int | None = Field(description="the slowest solved run's env steps to solve")
    running: int = Field(default=0, description="runs still training: not in env_steps until they end")
    env_steps: Spread | None = Field(default=None, description="env steps to solve over the runs that ended solved "
                                     "or at their budget, an unsolved run counting with the env steps it trained "
                                     "(a lower bound), as `gsolve train --seeds` reports: median, interquartile "
                                     "mean with its 95% bootstrap interval, fastest and slowest")


def _config_without_seed(store: RunStore, run_dir: Path) -> dict[str, Any]:
    try:
        return {k: v for k, v in store.config(run_dir).items() if k not in SAME_CONFIG_KEYS}
    except RunFileError:
        return {}


def group_runs(store: RunStore, run_dirs: list[Path]) -> list[SeedGroup]:
    """Group runs by config (config id and every resolved key but SAME_CONFIG_KEYS), in first-seen order."""
    keyed: dict[str, tuple[dict[str, Any], list[Path]]] = {}
    for d in run_dirs:
        cfg = _config_without_seed(store, d)
        key = repr(sorted(cfg.items())) if cfg else f"unreadable:{d.name}"
        keyed.setdefault(key, (cfg, []))[1].append(d)
    ids = {key: summarize_run(store, dirs[0]).config_id for key, (_, dirs) in keyed.items()}
    groups = []
    for cfg, dirs in keyed.values():
        summaries = [summarize_run(store, d) for d in dirs]
        cid = summaries[0].config_id
        # The label names the keys that set this group apart from the other groups of its config id only: a
        # group of another environment or algorithm differs in most keys, and its config id already says how.
        peers = [c for k, (c, _) in keyed.items() if ids[k] == cid]
        varying = sorted({k for c in peers for k in c if len({repr(o.get(k)) for o in peers}) > 1}
                         - {"env_id", "variant"})
        # Each key as --set writes it ({end: 0.0, start: 0.004}, true), not as Python prints it.
        label = " ".join([cid or dirs[0].name, *(f"{k}={yaml_value(cfg.get(k))}" for k in varying if k in cfg)])
        best = [s.best_eval_return for s in summaries if s.best_eval_return is not None]
        steps = sorted(s.solved_at_env_steps for s in summaries if s.solved and s.solved_at_env_steps is not None)
        seeds: list[int | None] = []
        for d in dirs:
            try:
                seed = store.config(d).get("seed")
            except RunFileError:
                seed = None
            seeds.append(seed if isinstance(seed, int) else None)
        ended = [s for s in summaries if s.solved or s.status == "completed"]
        groups.append(SeedGroup(
            label=label, config_id=cid, run_ids=[s.run_id for s in summaries], seeds=seeds,
            solved=sum(s.solved for s in summaries), best_eval_mean=statistics.fmean(best) if best else None,
            best_eval_min=min(best) if best else None, best_eval_max=max(best) if best else None,
            steps_to_solve_median=statistics.median(steps) if steps else None,
            steps_to_solve_max=steps[-1] if steps else None, running=sum(s.status == "running" for s in summaries),
            env_steps=spread([float(_steps_trained(s)) for s in ended], sum(s.solved for s in ended)) if ended else None))
    return groups


def _steps_trained(s: RunSummary) -> int:
    """To solve, or for an unsolved run the env steps it trained."""
    return s.solved_at_env_steps if s.solved and s.solved_at_env_steps is not None else s.env_steps
