"""Checkpoints: ``checkpoints/<name>.pt`` (torch, written atomically) plus the torch-free
``<name>.json`` metadata from ``run_folder.write_checkpoint_meta``."""

from __future__ import annotations

import errno
import io
import os
import pickle  # only for its error type: nothing here unpickles
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer, Policy
from gymnasium_solver.agents.dqn import QNetwork
from gymnasium_solver.config import (
    NATIVE_ALGOS,
    Algo,
    Config,
    DQNConfig,
    SB3Config,
    config_from_yaml_text,
    config_to_yaml,
)
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import SpaceSpec
from gymnasium_solver.train.write_errors import writing

CHECKPOINT_FORMAT = 1


class LoadedPolicy(NamedTuple):
    policy: Policy  # ActorCritic, or gymnasium_solver.agents.sb3.SB3Policy
    normalizer: ObsNormalizer
    config: Config
    env_steps: int


def checkpoint_path(run_dir: Path, name: str) -> Path:
    return run_dir / rf.CHECKPOINTS_DIR / f"{name}{rf.CHECKPOINT_SUFFIX}"


class TrainingState(NamedTuple):
    """What ``gsolve train --resume`` needs beyond the weights and the normaliser (docs/resume.md).
    Saved in ``last`` and the periodic ``step_*`` checkpoints, not in ``best``."""

    optimizer: dict[str, Any]  # optimizer.state_dict(): Adam moments and step counts
    torch_rng: torch.Tensor  # torch.get_rng_state(): PPO's minibatch shuffles
    numpy_rng: dict[str, Any]  # np.random.get_state(legacy=False), key as a tensor
    collector: dict[str, Any]  # RolloutCollector.state_dict(): sampling RNG, env-step and episode counters
    eval_count: int  # evaluations so far (evaluation seeds follow it)
    next_eval: int  # env steps of the next scheduled evaluation
    next_checkpoint: int | None  # env steps of the next periodic checkpoint
    # Confirmation episodes run so far (their seeds follow it, as evaluation seeds follow eval_count); 0 in a
    # checkpoint written before it was kept.
    confirmed: int = 0


class CheckpointState(NamedTuple):
    """A copy of everything a checkpoint holds, taken at one moment of training."""

    model: dict[str, torch.Tensor]
    normalizer: dict[str, Any]
    env_steps: int
    iteration: int
    wall_seconds: float
    eval_return_mean: float | None
    training: TrainingState | None = None
    sb3_model: torch.Tensor | None = None  # a Stable-Baselines3 model's own .zip, as uint8 (gymnasium_solver/agents/sb3.py)


class ResumeState(NamedTuple):
    """A checkpoint read back for a resume: everything training continues from."""

    model: dict[str, torch.Tensor]
    normalizer: dict[str, Any]
    env_steps: int
    iteration: int
    wall_seconds: float
    training: TrainingState


def numpy_rng_state() -> dict[str, Any]:
    """numpy's global RNG state in a form ``torch.load(weights_only=True)`` accepts."""
    state = np.random.get_state(legacy=False)
    assert isinstance(state, dict)
    inner = state["state"]
    return {**state, "state": {"key": torch.from_numpy(inner["key"].astype(np.int64)), "pos": int(inner["pos"])}}


def set_numpy_rng_state(state: dict[str, Any]) -> None:
    inner = state["state"]
    np.random.set_state({**state, "state": {"key": inner["key"].numpy().astype(np.uint32), "pos": inner["pos"]}})


def snapshot(
    policy: Policy,
    normalizer: ObsNormalizer,
    *,
    env_steps: int,
    iteration: int,
    wall_seconds: float,
    eval_return_mean: float | None,
    training: TrainingState | None = None,
) -> CheckpointState:
    """Copy the policy's weights and normalisation state now (training may continue meanwhile);
    ``training`` (already a copy) makes the checkpoint resumable."""
    # On the CPU: a GPU run's checkpoints load anywhere, and the copies do not hold GPU memory.
    model = {k: v.detach().to("cpu", copy=True) for k, v in policy.state_dict().items()}
    return CheckpointState(model, normalizer.state_dict(), env_steps, iteration, wall_seconds, eval_return_mean,
                           training)


def save_checkpoint(run_dir: Path, name: str, state: CheckpointState, cfg: Config) -> None:
    """Write ``checkpoints/<name>.pt`` atomically, then its metadata ``<name>.json``.
    Refuses non-finite weights: a checkpoint must always be loadable and usable."""
    if not all(bool(torch.isfinite(t).all()) for t in state.model.values()):
        raise ValueError(f"refusing to save checkpoint {name!r}: the policy has non-finite weights")
    path = checkpoint_path(run_dir, name)
    payload: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "model": state.model,
        "normalizer": state.normalizer,
        "config_yaml": config_to_yaml(cfg),
        "env_steps": state.env_steps,
        "iteration": state.iteration,
        "wall_seconds": state.wall_seconds,
    }
    if state.training is not None:
        payload["training"] = state.training._asdict()
    if state.sb3_model is not None:
        payload["sb3_model"] = state.sb3_model
    # Serialised in memory first: torch.save reports a full disk as a RuntimeError without errno,
    # a plain write reports it as OSError(ENOSPC), which the run records as disk_full.
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    with writing(run_dir, f"{rf.CHECKPOINTS_DIR}/{path.name}"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buffer.getbuffer())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    meta_name = f"{name}{rf.CHECKPOINT_META_SUFFIX}"
    with writing(run_dir, f"{rf.CHECKPOINTS_DIR}/{meta_name}"):
        rf.write_checkpoint_meta(
            run_dir,
            rf.CheckpointMeta(
                name=name, file=path.name, env_steps=state.env_steps, iteration=state.iteration,
                wall_seconds=state.wall_seconds, eval_return_mean=state.eval_return_mean, created_at=rf.utc_now_iso(),
            ),
        )


# O_NOFOLLOW: a checkpoint is read only from a regular file inside its run folder, never through a
# link; O_NONBLOCK keeps a FIFO planted in its place from blocking the open.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_payload(path: Path) -> dict[str, Any]:
    """The checkpoint at ``path``. FileNotFoundError if there is none; ValueError, naming the file
    inside its run folder and what is wrong, if it is a link, not a regular file, or not ours."""
    where = f"run {path.parent.parent.name}: {rf.CHECKPOINTS_DIR}/{path.name}"
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise FileNotFoundError(f"{where} does not exist") from None
    except OSError as exc:
        why = ("is a symbolic link, which is never followed" if exc.errno == errno.ELOOP
               else f"cannot be read: {os.strerror(exc.errno or 0)}")
        raise ValueError(f"{where} {why}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{where} is not a regular file (a directory or a special file stands in its place)")
        try:
            # weights_only: tensors and plain data only; any other object would have to be unpickled,
            # which could run code (issue 26). Its warnings (an unusual pickle protocol) are not the user's.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                payload = torch.load(f, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:
            if "Weights only load failed" in str(exc):
                raise ValueError(f"{where} holds Python objects that only unpickling could rebuild, which could run "
                                 "code and is never done; a checkpoint of ours holds only tensors and plain data, "
                                 "so this file was made or altered by something else") from None
            raise ValueError(f"{where} is truncated or damaged: torch cannot read it") from None
        except Exception:  # noqa: BLE001 - torch raises many types (RuntimeError, KeyError, ...) for damaged files
            raise ValueError(f"{where} is truncated or damaged: torch cannot read it") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT or "model" not in payload:
        raise ValueError(f"{where} is not a gymnasium-solver checkpoint (format {CHECKPOINT_FORMAT})")
    return payload


def load_resume_state(path: Path) -> ResumeState:
    """Read a resumable checkpoint (``last`` or ``step_*``). Raises FileNotFoundError, or
    ValueError if it is not ours or holds no training state (``best``, or written before resume existed)."""
    payload = _read_payload(path)
    training = payload.get("training")
    required = set(TrainingState._fields) - set(TrainingState._field_defaults)
    if not isinstance(training, dict) or not required <= set(training) <= set(TrainingState._fields):
        raise ValueError(f"checkpoint {path.name} holds no training state (optimizer, RNG, counters) to resume from; "
                         "it is a 'best' checkpoint, the last one of a completed run, or written by a trainer "
                         "without resume support")
    return ResumeState(payload["model"], payload["normalizer"], int(payload["env_steps"]), int(payload["iteration"]),
                       float(payload.get("wall_seconds", 0.0)), TrainingState(**training))


def load_checkpoint(path: Path, spec: SpaceSpec) -> LoadedPolicy:
    """Rebuild the policy saved at ``path`` for an environment with spaces ``spec``.
    Raises FileNotFoundError, or ValueError if the file is not a checkpoint of ours."""
    payload = _read_payload(path)
    cfg = checkpoint_config(path, payload)
    if cfg.algo not in NATIVE_ALGOS:
        return _load_sb3(path, payload, cfg, spec)
    try:
        policy: Policy = (QNetwork(spec, cfg) if isinstance(cfg, DQNConfig)
                          else ActorCritic(spec, cfg, with_critic="value_head.weight" in payload["model"]))
        policy.load_state_dict(payload["model"])
        normalizer = ObsNormalizer((spec.obs_dim,), enabled=False)
        normalizer.load_state_dict(payload["normalizer"])
        env_steps = int(payload["env_steps"])
    except (RuntimeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"run {path.parent.parent.name}: {rf.CHECKPOINTS_DIR}/{path.name} does not fit the policy "
                         f"its own config ({cfg.config_id}) describes: its weights come from another algorithm or "
                         f"network shape ({type(exc).__name__})") from None
    return LoadedPolicy(policy, normalizer, cfg, env_steps)


def _load_sb3(path: Path, payload: dict[str, Any], cfg: Config, spec: SpaceSpec) -> LoadedPolicy:
    """A Stable-Baselines3 run's checkpoint: the policy rebuilt from the embedded config and its
    ``model`` weights (SB3 imported only now). The ``sb3_model`` zip beside them is never read: SB3's
    loader unpickles the zip's ``data`` (issue 26), and the weights are all that acting needs."""
    from gymnasium_solver.agents.sb3 import load_sb3_policy

    where = f"run {path.parent.parent.name}: {rf.CHECKPOINTS_DIR}/{path.name}"
    weights = payload["model"]
    if not isinstance(cfg, SB3Config) or not isinstance(weights, dict) \
            or not all(isinstance(v, torch.Tensor) for v in weights.values()):
        raise ValueError(f"{where} holds no Stable-Baselines3 policy weights, though its config trains {cfg.algo}")
    try:
        policy = load_sb3_policy(cfg, weights, spec)
    except (RuntimeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} does not fit the {cfg.algo} policy its own config ({cfg.config_id}) describes: "
                         f"its weights come from another algorithm or network shape ({type(exc).__name__})") from None
    return LoadedPolicy(policy, ObsNormalizer((1,), enabled=False), cfg, int(payload["env_steps"]))


def checkpoint_config(path: Path, payload: dict[str, Any] | None = None) -> Config:
    """The config embedded in the checkpoint at ``path`` (read if ``payload`` is not given).
    ValueError if the checkpoint is unreadable or its config does not validate."""
    payload = _read_payload(path) if payload is None else payload
    text = payload.get("config_yaml")
    where = f"run {path.parent.parent.name}: {rf.CHECKPOINTS_DIR}/{path.name}"
    if not isinstance(text, str):
        raise ValueError(f"{where} holds no config")
    if "sb3_model" in payload and "algo: a2c" in text:
        raise ValueError(f"{where} is a Stable-Baselines3 A2C model, written before a2c became our own agent "
                         "(2026-11-26); this version trains and loads its own A2C only. Train the run again "
                         "(`gsolve retry` keeps its overrides) or load the model with SB3's A2C.load")
    cfg = config_from_yaml_text(text, f"{where} (embedded config)")
    if "sb3_model" in payload and cfg.algo is Algo.DQN:
        raise ValueError(f"{where} is a Stable-Baselines3 DQN model, written before dqn became our own agent "
                         "(2026-11-27); this version trains and loads its own DQN only. Train the run again "
                         "(`gsolve retry` keeps its overrides) or load the model with SB3's DQN.load")
    return cfg
