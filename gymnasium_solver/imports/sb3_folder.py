"""Read a Stable-Baselines3 / RL Zoo log folder: progress.csv, *monitor.csv, evaluations.npz, and the
Zoo's ``<env>/config.yml`` + ``args.yml``, into a :class:`SourceRun` in our metric names.

Layouts (what SB3 2.x and rl_zoo3 2.x write):
- SB3 ``configure(folder, ["csv", ...])``: ``progress.csv``, one row per logger dump, columns such as
  ``time/total_timesteps`` and ``rollout/ep_rew_mean``; ``Monitor(env, path)``: ``monitor.csv`` /
  ``<rank>.monitor.csv``, a ``#{"t_start": ..., "env_id": ...}`` line then ``r,l,t`` per episode;
  ``EvalCallback(log_path=folder)``: ``evaluations.npz`` with ``timesteps``, ``results``, ``ep_lengths``.
- RL Zoo ``logs/<algo>/<env>_<n>/``: the monitor files, evaluations.npz and ``<env>/config.yml``
  (hyperparameters) and ``<env>/args.yml`` (command line), both YAML dumps of OrderedDicts.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gymnasium_solver.config.zoo_names import zoo_name_of
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.imports.files import is_real_folder, open_source_file, read_source_file
from gymnasium_solver.imports.mapping import METRIC_MAP, Framework, Transform, our_name
from gymnasium_solver.imports.source import ImportError_, SourceRun, episode_stats, last_per_step

PROGRESS_CSV = "progress.csv"
EVALUATIONS_NPZ = "evaluations.npz"
ZOO_CONFIG, ZOO_ARGS = "config.yml", "args.yml"
STEP_COLUMN = "time/total_timesteps"
MAX_TEXT_BYTES = 512 * 1024 * 1024


class _ZooLoader(yaml.SafeLoader):
    """Safe YAML plus the two Python tags the RL Zoo's yaml.dump writes (OrderedDict, tuple)."""


def _ordered_dict(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
    inner = node.value[0] if isinstance(node, yaml.SequenceNode) and node.value else None
    pairs = loader.construct_sequence(inner, deep=True) if isinstance(inner, yaml.SequenceNode) else []
    return {str(k): v for k, v in pairs}


_ZooLoader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", _ordered_dict)
def _tuple(loader: yaml.SafeLoader, node: yaml.Node) -> list[Any]:
    return loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode) else []


_ZooLoader.add_constructor("tag:yaml.org,2002:python/tuple", _tuple)


def zoo_params_dir(folder: Path) -> Path | None:
    """The Zoo's ``<env>/`` subfolder holding config.yml or args.yml, if ``folder`` has one."""
    if (folder / ZOO_CONFIG).is_file() or (folder / ZOO_ARGS).is_file():
        return folder
    for sub in sorted(p for p in folder.iterdir() if is_real_folder(p)):
        if (sub / ZOO_CONFIG).is_file() or (sub / ZOO_ARGS).is_file():
            return sub
    return None


def monitor_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*monitor.csv") if p.is_file())


def is_sb3_folder(folder: Path) -> bool:
    return bool((folder / PROGRESS_CSV).is_file() or (folder / EVALUATIONS_NPZ).is_file() or monitor_files(folder)
                or zoo_params_dir(folder))


def _read_text(path: Path) -> str:
    return read_source_file(path, MAX_TEXT_BYTES).decode("utf-8", errors="replace")


def _names(header: list[str], n: int = 8) -> str:
    """A few column names of a header for a message, each cut short: a message quotes little of a file."""
    shown = ", ".join(h[:40] for h in header[:n])
    return shown + (", ..." if len(header) > n else "")


def load_zoo_yaml(path: Path) -> dict[str, Any]:
    try:
        raw = yaml.load(_read_text(path), Loader=_ZooLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ImportError_(f"{path} is not the YAML the RL Zoo writes ({str(exc).splitlines()[0]}); expected a "
                           "mapping of hyperparameters / command-line arguments") from None
    if not isinstance(raw, dict):
        raise ImportError_(f"{path} holds {type(raw).__name__}, expected a mapping of hyperparameters")
    return {str(k): v for k, v in raw.items()}


def _csv_rows(path: Path) -> tuple[list[str], list[list[str]], str | None]:
    """(header, rows, note): a torn last line (no newline) is dropped with a note; a row with the
    wrong number of fields elsewhere is an error naming the line."""
    import csv

    text = _read_text(path)
    note = None
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
        note = f"{path.name}'s last line was incomplete (the writer was cut off) and was left out"
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    if not lines:
        raise ImportError_(f"{path} is empty: expected a CSV header line then one row per "
                           f"{'episode' if 'monitor' in path.name else 'logger dump'}")
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, body = rows[0], rows[1:]
    for i, r in enumerate(body, start=2):
        if len(r) != len(header):
            raise ImportError_(f"{path} line {i} has {len(r)} fields, expected {len(header)} (the header's); "
                               "the file is damaged or was written by two runs at once")
    return header, body, note


def _floats(col: list[str]) -> np.ndarray:
    out = np.full(len(col), np.nan)
    for i, x in enumerate(col):
        if x != "":
            try:
                out[i] = float(x)
            except ValueError:
                out[i] = np.nan
    return out


def read_progress(path: Path, run: SourceRun) -> None:
    header, body, note = _csv_rows(path)
    if note:
        run.unknown["progress.csv"] = note
    if STEP_COLUMN not in header:
        raise ImportError_(f"{path} has no {STEP_COLUMN} column (found {_names(header)}): expected the "
                           "progress.csv of Stable-Baselines3's CSV logger")
    if not body:
        raise ImportError_(f"{path} has a header but no rows: expected one row per SB3 logger dump")
    cols = list(zip(*body, strict=True))
    steps_f = _floats(list(cols[header.index(STEP_COLUMN)]))
    ok = np.isfinite(steps_f)
    steps = steps_f[ok].astype(np.int64)
    table = METRIC_MAP[Framework.SB3]
    for name, col in zip(header, cols, strict=True):
        ours = our_name(Framework.SB3, name)
        if ours is None:
            continue
        v = _floats(list(col))[ok]
        present = np.array([x != "" for x in col])[ok]
        m = table.get(name)
        if m is not None and m.transform == Transform.NEGATE:
            v = -v
        if present.any():
            run.series[ours] = last_per_step(steps[present], v[present])
            run.metric_map[name] = ours


def _monitor_episodes(path: Path) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
    text = _read_text(path)
    first = text.split("\n", 1)[0]
    meta: dict[str, Any] = {}
    if first.startswith("#"):
        try:
            meta = json.loads(first[1:])
        except ValueError:
            meta = {}
    header, body, _ = _csv_rows(path)
    need = ("r", "l", "t")
    if not all(k in header for k in need):
        raise ImportError_(f"{path} has columns {_names(header)}; expected SB3 Monitor's r,l,t (return, "
                           "length, seconds)")
    cols = {k: _floats([row[header.index(k)] for row in body]) for k in need}
    return meta, cols["r"], cols["l"], cols["t"]


def read_monitors(files: list[Path], run: SourceRun, use_returns: bool) -> None:
    """Episodes from the Monitor files. Vectorised envs step in lockstep, so when env i finishes an
    episode after c_i steps of its own, the whole run has done n_envs * c_i steps."""
    per_env = [_monitor_episodes(f) for f in files]
    n_envs = len(per_env)
    steps, rets, lens, times = [], [], [], []
    for meta, r, ln, t in per_env:
        if run.env_id is None and isinstance(meta.get("env_id"), str):
            run.env_id = meta["env_id"]
        if isinstance(meta.get("t_start"), int | float):
            start = float(meta["t_start"])
            run.started_at = start if run.started_at is None else min(run.started_at, start)
            if len(t):
                end = start + float(np.nanmax(t))
                run.ended_at = end if run.ended_at is None else max(run.ended_at, end)
        steps.append(n_envs * np.cumsum(np.nan_to_num(ln)).astype(np.int64))
        rets.append(r)
        lens.append(ln)
        times.append(t)
    if not use_returns or not any(len(s) for s in steps):
        return
    s = np.concatenate(steps)
    order = np.argsort(s, kind="stable")
    s, r, ln = s[order], np.concatenate(rets)[order], np.concatenate(lens)[order]
    mean, std, count = episode_stats(s, r)
    run.series[M.EP_RETURN_MEAN], run.series[M.EP_RETURN_STD], run.series[M.EPISODES] = mean, std, count
    run.series[M.EP_LEN_MEAN] = episode_stats(s, ln)[0]
    run.metric_map["monitor r"] = M.EP_RETURN_MEAN
    run.metric_map["monitor l"] = M.EP_LEN_MEAN
    if n_envs > 1:
        run.unknown["training episode steps"] = (f"{n_envs} monitor files: each episode's env step is {n_envs} x "
                                                 "that env's own steps (vectorised envs step in lockstep)")


def read_evaluations(path: Path, run: SourceRun) -> None:
    try:
        with open_source_file(path, MAX_TEXT_BYTES) as f, np.load(f, allow_pickle=False) as z:
            timesteps, results = np.asarray(z["timesteps"]), np.asarray(z["results"], dtype=np.float64)
            ep_lengths = np.asarray(z["ep_lengths"], dtype=np.float64) if "ep_lengths" in z.files else None
    except (OSError, ValueError, KeyError) as exc:
        raise ImportError_(f"{path} is not the evaluations.npz SB3's EvalCallback writes (arrays timesteps, "
                           f"results, ep_lengths): {exc}") from None
    if results.ndim != 2 or len(results) != len(timesteps) or len(timesteps) == 0:
        raise ImportError_(f"{path} holds {len(timesteps)} timesteps and results of shape {results.shape}: expected "
                           "one row of episode returns per evaluation")
    steps = timesteps.astype(np.int64)
    run.series[M.EVAL_RETURN_MEAN] = last_per_step(steps, results.mean(axis=1))
    run.series[M.EVAL_RETURN_STD] = last_per_step(steps, results.std(axis=1))
    if ep_lengths is not None and ep_lengths.shape == results.shape:
        run.series[M.EVAL_EP_LEN_MEAN] = last_per_step(steps, ep_lengths.mean(axis=1))
    run.eval_episodes = int(results.shape[1])
    run.metric_map["evaluations.npz results"] = M.EVAL_RETURN_MEAN


def _int(x: Any) -> int | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return int(f) if math.isfinite(f) and f > 0 else None


def read_zoo_params(params: Path, run: SourceRun) -> None:
    args = load_zoo_yaml(params / ZOO_ARGS) if (params / ZOO_ARGS).is_file() else {}
    hyper = load_zoo_yaml(params / ZOO_CONFIG) if (params / ZOO_CONFIG).is_file() else {}
    run.files += [p for p in (params / ZOO_ARGS, params / ZOO_CONFIG) if p.is_file()]
    run.kind = "rl_zoo_folder"
    run.config = dict(hyper)
    if args:
        run.config["zoo_args"] = args
    env = args.get("env") or params.name
    run.env_id = str(env)
    if isinstance(args.get("algo"), str):
        run.algo = args["algo"].lower()
    if isinstance(args.get("seed"), int) and args["seed"] >= 0:
        run.seed = args["seed"]
    budget = zoo_name_of("max_env_steps")  # the Zoo's n_timesteps (config/zoo_names.py)
    run.max_env_steps = _int(args.get(budget)) or _int(hyper.get(budget))
    if isinstance(args.get("eval_episodes"), int):
        run.eval_episodes = args["eval_episodes"]


def read_sb3_folder(folder: Path) -> SourceRun:
    """A SourceRun from an SB3 / RL Zoo log folder. ImportError_ says what is missing or damaged."""
    run = SourceRun(Framework.SB3, "sb3_log_folder", folder, [], {}, {})
    params = zoo_params_dir(folder)
    if params is not None:
        read_zoo_params(params, run)
        if run.algo is None and folder.parent.name:
            run.algo = folder.parent.name.lower()  # logs/<algo>/<env>_<n>
    progress = folder / PROGRESS_CSV
    if progress.is_file():
        read_progress(progress, run)
        run.files.append(progress)
    monitors = monitor_files(folder)
    if monitors:
        read_monitors(monitors, run, use_returns=M.EP_RETURN_MEAN not in run.series)
        run.files += monitors
    if (folder / EVALUATIONS_NPZ).is_file():
        read_evaluations(folder / EVALUATIONS_NPZ, run)
        run.files.append(folder / EVALUATIONS_NPZ)
    if not run.series:
        raise ImportError_(f"{folder} has no metrics to import: expected progress.csv (SB3's CSV logger), "
                           "*monitor.csv (SB3's Monitor) or evaluations.npz (EvalCallback)")
    return run
