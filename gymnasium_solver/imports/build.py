"""Write a :class:`SourceRun` as a read-only run folder of our contract (run.json, config.yaml,
metrics.csv, run.log), saying in run.json's ``source.unknown`` what the source could not tell."""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import yaml

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.imports.files import open_source_file
from gymnasium_solver.imports.source import ImportError_, SourceRun, union_steps
from gymnasium_solver.run_store.limits import MAX_METRIC_COLUMNS

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_FIRST_COLUMNS = (M.ITERATION, M.ENV_STEPS)


_HASHED = 1 << 20


def fingerprint(run: SourceRun) -> str:
    """sha256 over each file read: its name, size, first and last MB. The same content imports to
    the same run; a log that grew (a run still training) has a new size, so it is new content. The
    whole of a 160 MB event file would cost as much to hash as to import."""
    h = hashlib.sha256()
    for p in sorted(run.files):
        with open_source_file(p) as f:  # never through a link, like every read of the source
            size = os.fstat(f.fileno()).st_size
            h.update(f"{p.name}\0{size}\0".encode())
            h.update(f.read(_HASHED))
            if size > 2 * _HASHED:
                f.seek(size - _HASHED)
                h.update(f.read(_HASHED))
            else:
                h.update(f.read())
    return h.hexdigest()[:32]


_MAX_TAG_CHARS = 200


def _columns(run: SourceRun) -> list[str]:
    """Our columns first, then the source's own tags that a metrics.csv header can hold: no comma or
    line break, at most 200 characters, and no more than the run store reads (MAX_METRIC_COLUMNS;
    a TensorBoard log can hold thousands of tags). What is left out is said in ``run.unknown``."""
    ours = [c for c in rf.COMMON_COLUMNS + rf.PPO_COLUMNS if c in run.series and c not in _FIRST_COLUMNS]
    seen = set(ours)
    ours = list(dict.fromkeys(ours))
    extra = sorted(c for c in run.series if c not in seen and c not in _FIRST_COLUMNS)
    bad = {c for c in extra if len(c) > _MAX_TAG_CHARS or any(ch in c for ch in ",\r\n")}
    if bad:
        run.unknown["tags left out"] = (f"{len(bad)} tags whose names a CSV header cannot hold (a comma, a line "
                                        f"break or more than {_MAX_TAG_CHARS} characters): {', '.join(repr(c[:40]) for c in sorted(bad)[:5])}")
        extra = [c for c in extra if c not in bad]
    room = MAX_METRIC_COLUMNS - len(_FIRST_COLUMNS) - len(ours)
    if len(extra) > room:
        run.unknown["metrics left out"] = (f"{len(extra) - room} of the source's tags beyond the {MAX_METRIC_COLUMNS} "
                                           f"columns a run holds, from {extra[room][:40]!r} on (in name order)")
        extra = extra[:room]
    return [*_FIRST_COLUMNS, *ours, *extra]


def metrics_table(run: SourceRun) -> tuple[list[str], np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(columns, env_steps of each row, {column: (values, present)}): one row per step any metric has."""
    if not run.series:  # a source with a config and no curves (an SB3 model zip): a header-only metrics.csv
        return list(_FIRST_COLUMNS), np.zeros(0, dtype=np.int64), {}
    steps = union_steps([s.steps for s in run.series.values()])
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, s in run.series.items():
        idx = np.searchsorted(steps, s.steps)
        values = np.full(len(steps), np.nan)
        present = np.zeros(len(steps), dtype=bool)
        values[idx], present[idx] = s.values, True
        cols[name] = (values, present)
    return _columns(run), steps, cols


def _arrow(values: np.ndarray, kind: pa.DataType, present: np.ndarray | None = None) -> pa.Array:
    """A numpy column as an arrow array without a copy (pa.array() would import pandas to check
    whether it was given a Series); ``present`` False becomes null, written as an empty field."""
    validity = None if present is None else pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(kind, len(values), [validity, pa.py_buffer(values)])


def write_metrics(path: Path, columns: list[str], steps: np.ndarray,
                  cols: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """metrics.csv through arrow's C++ CSV writer: empty = not measured, nan/inf as written."""
    arrays: list[pa.Array] = [_arrow(np.arange(1, len(steps) + 1, dtype=np.int64), pa.int64()),
                              _arrow(np.ascontiguousarray(steps, dtype=np.int64), pa.int64())]
    for c in columns[2:]:
        values, present = cols[c]
        arrays.append(_arrow(np.ascontiguousarray(values, dtype=np.float64), pa.float64(), present))
    table = pa.Table.from_arrays(arrays, names=columns)
    with open(path, "wb") as f:  # the header as our writer spells it (unquoted), then arrow's rows
        f.write((",".join(columns) + "\n").encode("utf-8"))
        pcsv.write_csv(table, f, write_options=pcsv.WriteOptions(include_header=False, quoting_style="none"))


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")


def _env_facts(env_id: str, unknown: dict[str, str]) -> tuple[float | None, rf.ActionSpaceInfo | None,
                                                                  list[int] | None]:
    """(env spec's reward threshold, action space, observation shape), made lazily with gymnasium."""
    import gymnasium as gym

    try:
        spec = gym.spec(env_id)
    except Exception:  # gymnasium raises its own Error types for unknown / deprecated ids
        unknown["environment"] = f"{env_id} is not registered in this gymnasium: no threshold or action space"
        return None, None, None
    try:
        env = gym.make(env_id)
        try:
            space, obs = env.action_space, env.observation_space
        finally:
            env.close()
    except Exception as exc:  # a missing extra (box2d, ale) must not stop the import
        unknown["action_space"] = f"could not create {env_id} to read its spaces ({type(exc).__name__})"
        return spec.reward_threshold, None, None
    info: rf.ActionSpaceInfo | None = None
    if isinstance(space, gym.spaces.Discrete):
        info = rf.ActionSpaceInfo(kind="discrete", n=int(space.n), max_entropy=math.log(int(space.n)))
    elif isinstance(space, gym.spaces.Box):
        info = rf.ActionSpaceInfo(kind="box", shape=list(space.shape), low=[float(x) for x in space.low.ravel()],
                                  high=[float(x) for x in space.high.ravel()])
    shape = list(obs.shape) if obs.shape is not None else None
    return spec.reward_threshold, info, shape


def _evals(run: SourceRun, steps: np.ndarray, wall: np.ndarray | None) -> list[rf.EvalRecord]:
    s = run.series.get(M.EVAL_RETURN_MEAN)
    if s is None:
        return []
    std = run.series.get(M.EVAL_RETURN_STD)
    out = []
    for i, (x, y) in enumerate(zip(s.steps, s.values, strict=True)):
        if not math.isfinite(y):
            continue
        row = int(np.searchsorted(steps, x))
        sd = float(std.values[i]) if std is not None and i < len(std.values) else 0.0
        out.append(rf.EvalRecord(return_mean=float(y), return_std=sd if math.isfinite(sd) else 0.0,
                                 episodes=run.eval_episodes or 0, env_steps=int(x), iteration=row + 1,
                                 wall_seconds=float(wall[row]) if wall is not None and math.isfinite(wall[row]) else 0.0))
    return out


def _wall_column(steps: np.ndarray, cols: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    if M.WALL_SECONDS not in cols:
        return None
    values, present = cols[M.WALL_SECONDS]
    idx = np.flatnonzero(present)
    if len(idx) == 0:
        return None
    return np.interp(np.arange(len(steps)), idx, values[idx])


def _preset_threshold(env_id: str) -> tuple[str, float] | None:
    """(config id, threshold) of our first preset for ``env_id`` that has a finite one."""
    from gymnasium_solver import config as config_mod

    try:
        variants = config_mod.list_variants(env_id)
    except config_mod.ConfigError:
        return None
    for variant in variants:
        cfg = config_mod.preset_config(f"{env_id}:{variant}")
        if cfg is not None and cfg.reward_threshold is not None and math.isfinite(cfg.reward_threshold):
            return cfg.config_id, float(cfg.reward_threshold)
    return None


def _threshold(run: SourceRun, spec_threshold: float | None) -> float | None:
    if run.reward_threshold is not None:
        return run.reward_threshold
    if spec_threshold is not None:
        run.unknown["reward_threshold"] = (f"the source does not record one; taken from the {run.env_id} spec "
                                           f"({spec_threshold:g})")
        return float(spec_threshold)
    preset = _preset_threshold(str(run.env_id))
    if preset is not None:
        run.unknown["reward_threshold"] = (f"neither the source nor the {run.env_id} spec has one; taken from this "
                                           f"project's {preset[0]} preset ({preset[1]:g})")
        return preset[1]
    run.unknown["reward_threshold"] = f"neither the source nor the {run.env_id} spec has one: solved cannot be judged"
    return None


def _notes_for_missing(run: SourceRun, evals: list[rf.EvalRecord], last_step: int) -> None:
    if not evals:
        run.unknown["evaluation"] = ("the source has no evaluation (no EvalCallback / evaluations.npz): best/final eval "
                                     "and solved are unknown; judge it on rollout/ep_return_mean")
    elif not run.eval_episodes:
        run.unknown["eval episodes"] = "the number of episodes per evaluation is not recorded (shown as 0)"
    if run.max_env_steps is None:
        run.unknown["max_env_steps"] = f"the source does not record its budget; the last logged step ({last_step}) is used"
    if run.seed is None:
        run.unknown["seed"] = "the source does not record its seed (shown as 0)"
    if run.started_at is None:
        run.unknown["created_at"] = "the source records no times: created_at is the import time"
    run.unknown.setdefault("status", "the source does not record how training ended: 'completed' means the log ends "
                                     "there (it may have been stopped or crashed)")


def build_run_info(run: SourceRun, run_id: str, variant: str, columns: list[str], steps: np.ndarray,
                   cols: dict[str, tuple[np.ndarray, np.ndarray]], digest: str) -> tuple[rf.RunInfo, dict[str, Any]]:
    """(run.json, config.yaml) for ``run``; fills ``run.unknown`` with what could not be known."""
    assert run.env_id is not None and run.algo is not None
    spec_threshold, space, obs_shape = _env_facts(run.env_id, run.unknown)
    threshold = _threshold(run, spec_threshold)
    wall = _wall_column(steps, cols)
    evals = _evals(run, steps, wall)
    last_step = int(steps[-1]) if len(steps) else (run.env_steps or 0)
    _notes_for_missing(run, evals, last_step)
    solved_at = None
    if threshold is not None:
        first = next((e for e in evals if e.return_mean >= threshold), None)
        if first is not None:
            solved_at = rf.SolvedAt(env_steps=first.env_steps, wall_seconds=first.wall_seconds,
                                    iteration=first.iteration, eval_return_mean=first.return_mean)
    max_steps = run.max_env_steps or max(last_step, 1)
    now = rf.utc_now_iso()
    created = _iso(run.started_at) or now
    # "budget exhausted" only for a budget the source recorded: without one, max_steps is the last logged step and
    # the log may end for any reason (its `unknown` notes say so)
    spent = run.max_env_steps is not None and last_step >= max_steps
    stop = rf.StopReason.SOLVED if solved_at else (rf.StopReason.BUDGET_EXHAUSTED if spent else None)
    info = rf.RunInfo(
        run_id=run_id, config_id=f"{run.env_id}:{variant}", env_id=run.env_id, variant=variant, algo=run.algo,
        seed=run.seed or 0, status=rf.RunStatus.COMPLETED, stop_reason=stop, created_at=created,
        updated_at=_iso(run.ended_at) or now, finished_at=_iso(run.ended_at) or now, pid=None, host=socket.gethostname(),
        reward_threshold=threshold, max_env_steps=max_steps,
        progress=rf.Progress(env_steps=last_step, iteration=len(steps),
                             wall_seconds=float(wall[-1]) if wall is not None else 0.0),
        best_eval=max(evals, key=lambda e: e.return_mean) if evals else None,
        last_eval=evals[-1] if evals else None, solved=solved_at is not None, solved_at=solved_at,
        action_space=space, observation_shape=obs_shape, metric_columns=columns,
        source=rf.ImportSource(framework=run.framework.value, kind=run.kind, path=str(run.path.resolve()),
                               files=sorted(p.name if p == run.path else str(p.relative_to(run.path))
                                                  for p in run.files), fingerprint=digest,
                               imported_at=now, metric_map=dict(run.metric_map), unknown=dict(run.unknown)),
        read_only=True,
    )
    config: dict[str, Any] = {"env_id": run.env_id, "variant": variant, "algo": run.algo, "seed": info.seed,
                              "reward_threshold": threshold, "max_env_steps": max_steps}
    config.update({k: v for k, v in run.config.items() if k not in config})
    config["imported_from"] = {"framework": run.framework.value, "kind": run.kind, "path": str(run.path.resolve())}
    return info, config


def _plain(x: Any) -> Any:
    """YAML-safe: mappings and lists recursively, numbers, strings, booleans, None; anything else str."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x if isinstance(x, str | int | float | bool | type(None)) else str(x)


def write_run(run: SourceRun, runs_dir: Path, variant: str, digest: str) -> rf.RunInfo:
    """Write the run folder atomically (a temp folder renamed into place) and return its run.json."""
    columns, steps, cols = metrics_table(run)
    run_id = rf.new_run_id()
    while (runs_dir / run_id).exists():
        run_id = rf.new_run_id()
    info, config = build_run_info(run, run_id, variant, columns, steps, cols, digest)
    runs_dir.mkdir(parents=True, exist_ok=True)
    tmp = runs_dir / f".import-{run_id}"
    tmp.mkdir()
    try:
        write_metrics(tmp / rf.METRICS_CSV, columns, steps, cols)
        (tmp / rf.CONFIG_YAML).write_text(yaml.safe_dump(_plain(config), sort_keys=False), encoding="utf-8")
        log = [f"{info.source.imported_at if info.source else ''} INFO imported read-only from {run.framework.value} "
               f"{run.kind} at {run.path.resolve()} ({len(steps)} rows, {len(columns) - 2} metrics)"]
        log += [f"{info.created_at} INFO unknown {k}: {v}" for k, v in run.unknown.items()]
        (tmp / rf.RUN_LOG).write_text("\n".join(log) + "\n", encoding="utf-8")
        from gymnasium_solver.train.run_writer import write_imported_run_info  # the one writer of run.json

        write_imported_run_info(tmp, info)
        tmp.rename(runs_dir / run_id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def check_variant(name: str, env_id: str) -> None:
    """A --name must be a plain label and must not be one of our presets' variants (the run would be
    compared with a preset it never came from)."""
    if not NAME_PATTERN.match(name):
        raise ImportError_(f"--name {name!r} is not a plain label: use letters, digits, '_', '.', '-' (at most 64), "
                           "e.g. zoo-dqn")
    from gymnasium_solver.config import preset_config

    if preset_config(f"{env_id}:{name}") is not None:
        raise ImportError_(f"--name {name!r} is a preset variant of {env_id} ({env_id}:{name}); an imported run did "
                           f"not come from it: pick another name, e.g. imported-{name}")
