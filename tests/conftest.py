"""Shared fixtures: a runs folder with a few REAL short training runs, made once per session.

The runs are made by the trainer itself (``gymnasium_solver.train.training.train``), so the read side
and the MCP tools are tested against exactly what the trainer writes, not against hand-made
files. They take a few seconds in total (tiny budgets, 4 envs).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

# scripts/ holds the corpus scorer and generators (not part of the installed package).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

# Training reads the user's saved presets (~/.config/gsolve/presets) and tracking defaults (~/.config/gsolve/config.yaml):
# the suite reads an empty config home of its own, and no preset folder the shell named, whoever runs it.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="gsolve-test-config-")
os.environ.pop("GSOLVE_CONFIG_DIR", None)


class RealRuns(NamedTuple):
    runs_dir: Path
    short: str  # CartPole-v1:ppo, budget exhausted, not solved
    solved: str  # CartPole-v1:ppo with a low threshold: solved at an early evaluation
    reinforce: str  # CartPole-v1:reinforce, budget exhausted


SMALL = ["n_envs=4", "eval_freq=1024", "eval_episodes=2"]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> RealRuns:
    from gymnasium_solver import config
    from gymnasium_solver.train import training

    runs_dir = tmp_path_factory.mktemp("runs")
    short = training.train(  # 16 rollouts of 4 envs x 32 steps: a metrics row each
        config.resolve_config("CartPole-v1:ppo", [*SMALL, "max_env_steps=2048", "n_steps=32", "batch_size=64"]), runs_dir
    )
    solved = training.train(
        config.resolve_config(
            # A slow learning rate keeps its one evaluation far below the preset's 475: the run stops at
            # its own threshold, and what it would have needed for 475 stays unknown.
            "CartPole-v1:ppo", [*SMALL, "max_env_steps=20000", "batch_size=64", "reward_threshold=15",
                                "learning_rate=0.0003"]
        ),
        runs_dir,
    )
    reinforce = training.train(
        config.resolve_config("CartPole-v1:reinforce", [*SMALL, "max_env_steps=2048", "episodes_per_update=4"]),
        runs_dir,
    )
    assert solved.solved and not short.solved, "fixture runs did not end as intended; check the trainer"
    return RealRuns(runs_dir, short.run_id, solved.run_id, reinforce.run_id)


@pytest.fixture()
def scratch_runs(real_runs: RealRuns, tmp_path: Path) -> RealRuns:
    """A private copy of the real runs, for tests that corrupt or add files."""
    dst = tmp_path / "runs"
    shutil.copytree(real_runs.runs_dir, dst, symlinks=True)
    return real_runs._replace(runs_dir=dst)


@pytest.fixture(autouse=True)
def _env_module_grants():
    """Each test starts with a fresh CLI process's grants (--env-package/--env-class are process-wide, like a
    command's; a session-scoped MCP server made before this fixture ran would otherwise leave every later
    test distrusting presets) and leaves the grants it found."""
    from gymnasium_solver.config import env_modules

    state = env_modules.snapshot()
    env_modules.restore(type(state)())  # nothing granted, presets trusted: a fresh `gsolve` process
    yield
    env_modules.restore(state)


def kill_run_if_alive(run_dir: Path) -> None:
    """SIGKILL the process group of a run a test started, if its run.json names a live one (cleanup after a test
    that may have failed before the run ended)."""
    import signal

    from gymnasium_solver.contract import run_folder as rf

    try:
        pid = rf.read_run_info(run_dir).pid
    except (OSError, ValueError):
        return
    if pid and rf.pid_alive(pid):
        os.killpg(pid, signal.SIGKILL)
