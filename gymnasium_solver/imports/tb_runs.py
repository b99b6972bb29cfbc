"""Read a Stable-Baselines3 or CleanRL TensorBoard event folder into a :class:`SourceRun`.

SB3 (``tensorboard_log=...``) writes ``<tensorboard_log>/<ALGO>_<n>/events.out.tfevents.*`` with its
logger's keys as tags (``rollout/ep_rew_mean``, ``train/value_loss``, ``eval/mean_reward``) at step
``num_timesteps``. CleanRL writes ``runs/<env>__<exp_name>__<seed>__<time>/`` with ``charts/`` and
``losses/`` tags at ``global_step``, one ``charts/episodic_return`` per finished episode, and its
arguments as a markdown table in the text summary ``hyperparameters``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.imports.mapping import METRIC_MAP, Framework, Transform, our_name
from gymnasium_solver.imports.source import (
    ImportError_,
    Series,
    SourceRun,
    episode_stats,
    last_per_step,
    union_steps,
)
from gymnasium_solver.imports.tb_events import EventData, event_files, read_event_folder, stable_by_step

CLEANRL_PREFIXES = ("charts/", "losses/")
_SB3_FOLDER = re.compile(r"^([A-Za-z0-9]+)_\d+$")  # PPO_1, DQN_3, RecurrentPPO_2
_ROW = re.compile(r"^\|([^|]+)\|(.*)\|\s*$")


def is_event_folder(folder: Path) -> bool:
    return bool(event_files(folder))


def framework_of(data: EventData) -> Framework:
    tags = list(data.scalars)
    return Framework.CLEANRL if sum(t.startswith(CLEANRL_PREFIXES) for t in tags) * 2 > len(tags) else Framework.SB3


def cleanrl_args(texts: dict[str, list[str]]) -> dict[str, Any]:
    """CleanRL's ``|param|value|`` markdown table of its arguments, values parsed as YAML scalars."""
    body = next((v[-1] for k, v in texts.items() if k.split("/")[0] == "hyperparameters" and v), "")
    out: dict[str, Any] = {}
    for line in body.splitlines()[2:]:
        m = _ROW.match(line.strip())
        if not m:
            continue
        key, raw = m.group(1).strip(), m.group(2).strip()
        try:
            value = yaml.safe_load(raw) if raw else None
        except yaml.YAMLError:
            value = raw
        out[key] = value if isinstance(value, str | int | float | bool | type(None)) else raw
    return out


def _wall(data: EventData) -> tuple[Series, float, float]:
    """Seconds since the first event at each step (the earliest write of that step), start, end."""
    series = [stable_by_step(s) for s in data.scalars.values()]
    steps = union_steps([s.steps for s in series])
    first = np.full(len(steps), np.inf)
    for s in series:  # a tag logged twice at one step: either write time will do
        idx = np.searchsorted(steps, s.steps)
        first[idx] = np.minimum(first[idx], s.wall_times)
    start = float(np.min(first))
    end = float(max(np.max(s.wall_times) for s in series))
    # Seconds are monotonic in steps even if a restart wrote earlier steps later.
    return Series(steps, np.maximum.accumulate(first - start)), start, end


def _add_series(run: SourceRun, data: EventData) -> None:
    table = METRIC_MAP[run.framework]
    for tag, s in data.scalars.items():
        ours = our_name(run.framework, tag)
        if ours is None:
            continue
        m = table.get(tag)
        values = -s.values if m is not None and m.transform == Transform.NEGATE else s.values
        if m is not None and m.transform == Transform.EPISODES_MEAN:
            order = np.argsort(s.steps, kind="stable")
            mean, std, count = episode_stats(s.steps[order], values[order])
            run.series[ours] = mean
            if ours == M.EP_RETURN_MEAN:
                run.series[M.EP_RETURN_STD], run.series[M.EPISODES] = std, count
        else:
            run.series[ours] = last_per_step(s.steps, values)
        run.metric_map[tag] = ours


def _env_from_path(folder: Path) -> str | None:
    """An environment id among the path's folder names (SB3 users often log to tb/<env>/PPO_1)."""
    from gymnasium.envs.registration import registry  # the registry, not an environment

    for part in reversed(folder.resolve().parts):
        for candidate in (part, part.split("__")[0]):
            if candidate in registry:
                return candidate
    return None


def read_tensorboard_folder(folder: Path, env_id: str | None = None) -> SourceRun:
    """A SourceRun from an SB3 or CleanRL event folder. ImportError_ (or EventFileError) says why not."""
    data = read_event_folder(folder)
    framework = framework_of(data)
    kind = "cleanrl_tensorboard" if framework == Framework.CLEANRL else "sb3_tensorboard"
    run = SourceRun(framework, kind, folder, [folder / f for f in data.files], {}, {})
    _add_series(run, data)
    wall, run.started_at, run.ended_at = _wall(data)
    if M.WALL_SECONDS not in run.series:
        run.series[M.WALL_SECONDS] = wall
    if data.truncated:
        run.unknown["event files"] = (f"{', '.join(data.truncated)} ended in an incomplete record (the writer was "
                                      "cut off); the complete records were imported")
    if framework == Framework.CLEANRL:
        args = cleanrl_args(data.texts)
        run.config = args
        run.env_id = env_id or (args.get("env_id") if isinstance(args.get("env_id"), str) else None)
        name = args.get("exp_name")
        run.algo = str(name).split("_")[0].lower() if name else None
        run.seed = args.get("seed") if isinstance(args.get("seed"), int) else None
        total = args.get("total_timesteps")
        run.max_env_steps = int(total) if isinstance(total, int | float) and total > 0 else None
        if not args:
            run.unknown["config"] = "the event file has no 'hyperparameters' text summary: no config to keep"
    else:
        m = _SB3_FOLDER.match(folder.resolve().name)
        run.algo = m.group(1).lower() if m else None
        run.env_id = env_id
        run.unknown["config"] = "SB3's TensorBoard output holds no hyperparameters: config.yaml has only what is known"
    if run.env_id is None:
        run.env_id = _env_from_path(folder)
    if not run.series:
        raise ImportError_(f"the event files in {folder} hold no metric to import")
    return run
