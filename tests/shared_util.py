"""Helpers several test modules share: a stand-in for the stop signal, and loading a bench script."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


@contextmanager
def stop_after(n: int) -> Iterator[Callable[[], bool]]:
    """Stands in for the SIGTERM handler (training.stop_on_signals): the user asks to stop at the n-th
    iteration's end."""
    calls = {"n": 0}

    def stop_requested() -> bool:
        calls["n"] += 1
        return calls["n"] >= n

    yield stop_requested


def load_bench(name: str) -> ModuleType:
    """bench/<name>.py as a module (the bench scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH_DIR / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def sb3_era_checkpoint(tmp_path: Path, config_yaml: str) -> Path:
    """A best.pt as the SB3-era trainer wrote it (SB3's .zip beside the weights) in a run folder."""
    import torch

    from gymnasium_solver.contract import run_folder as rf
    from gymnasium_solver.train.checkpoints import CHECKPOINT_FORMAT

    run_dir = tmp_path / "20261120-000000-abcdef0"
    (run_dir / rf.CHECKPOINTS_DIR).mkdir(parents=True)
    path = run_dir / rf.CHECKPOINTS_DIR / "best.pt"
    torch.save({"format": CHECKPOINT_FORMAT, "config_yaml": config_yaml,
                "sb3_model": torch.zeros(4, dtype=torch.uint8), "model": {}, "env_steps": 2000}, path)
    return path


def play_script(run_dir: Path, script: list[Any], i: int) -> None:
    """One poll of a scripted trial (the scripted trial backends of the job tests): step ``i`` of
    ``script`` is a progress in env steps, ``("solved", N)`` to solve at N, ``("fail", N)`` to fail with
    an error at N, ``("eval", N, R)`` to reach N with a best evaluation of R, and past its end the budget is
    spent. Writes the run.json the coordinator reads."""
    from gymnasium_solver.contract import run_folder as rf

    info = rf.read_run_info(run_dir)
    if i >= len(script):
        info.status, info.stop_reason = rf.RunStatus.COMPLETED, rf.StopReason.BUDGET_EXHAUSTED
    elif isinstance(script[i], tuple) and script[i][0] == "fail":
        info.progress = rf.Progress(env_steps=script[i][1], wall_seconds=script[i][1] / 1000)
        info.status, info.stop_reason = rf.RunStatus.FAILED, rf.StopReason.ERROR
    elif isinstance(script[i], tuple) and script[i][0] == "eval":
        _, steps, value = script[i]
        info.progress = rf.Progress(env_steps=steps, wall_seconds=steps / 1000)
        info.best_eval = rf.EvalRecord(return_mean=value, return_std=0.0, episodes=10, env_steps=steps,
                                       wall_seconds=steps / 1000, iteration=1)
    elif isinstance(script[i], tuple):
        steps = script[i][1]
        info.progress = rf.Progress(env_steps=steps, wall_seconds=steps / 1000)
        info.solved, info.status, info.stop_reason = True, rf.RunStatus.COMPLETED, rf.StopReason.SOLVED
        info.solved_at = rf.SolvedAt(env_steps=steps, wall_seconds=steps / 1000, iteration=1, eval_return_mean=500)
    else:
        info.progress = rf.Progress(env_steps=script[i], wall_seconds=script[i] / 1000)
    rf.write_run_info(run_dir, info)
