"""Helpers several test modules share: a stand-in for the stop signal, and loading a bench script."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

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

    from gymnasium_solver import run_folder as rf
    from gymnasium_solver.checkpoints import CHECKPOINT_FORMAT

    run_dir = tmp_path / "20261120-000000-abcdef0"
    (run_dir / rf.CHECKPOINTS_DIR).mkdir(parents=True)
    path = run_dir / rf.CHECKPOINTS_DIR / "best.pt"
    torch.save({"format": CHECKPOINT_FORMAT, "config_yaml": config_yaml,
                "sb3_model": torch.zeros(4, dtype=torch.uint8), "model": {}, "env_steps": 2000}, path)
    return path
