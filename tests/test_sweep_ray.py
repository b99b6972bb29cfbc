"""The Ray trial backend (issue 10): a local Ray instance started by the test runs a tiny sweep's
trials and a `gsolve fix` experiment's, each writing its run folder to the shared runs folder, and a
cancelled trial stops gracefully (the trainer records user_stopped after a final evaluation)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_util import copy_case

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.backend import TrialSpec, make_backend
from gymnasium_solver.jobs.ray_backend import RayBackend
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import launch
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.runner import run_sweep
from gymnasium_solver.sweeps.space import parse_space

TINY: dict[str, Any] = {"n_envs": 4, "eval_freq": 512, "eval_episodes": 2, "batch_size": 64, "max_env_steps": 2048}
MAX_WAIT_SECONDS = 120.0  # a bound so a broken backend fails the test instead of hanging it


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_sweep_runs_its_trials_on_ray(tmp_path: Path, ray_local: Any) -> None:
    runs = tmp_path / "runs"
    space = parse_space({"n_epochs": {"type": "int", "low": 2, "high": 4}}, "space")
    # One trial at a time: the trials (and the tests below) reuse one Ray worker, which imports the trainer once.
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", space, n_trials=2, parallel=1, backend="ray",
                                fixed_overrides=TINY)
    backend = make_backend(runs, 1, "ray")
    assert isinstance(backend, RayBackend) and backend.capacity == 1
    run_sweep(RunStore(runs), plan.record, space, backend, eval_grid=plan.eval_grid)
    trials = st.open_study(plan.record, create=False).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"]
    for t in trials:
        info = rf.read_run_info(runs / str(st.result_of(t).run_id))
        assert info.sweep_id == plan.record.sweep_id and info.trial_number == t.number
        assert info.status == rf.RunStatus.COMPLETED and info.progress.env_steps >= 2048
        assert (runs / info.run_id / rf.METRICS_CSV).is_file()


def test_a_cancelled_ray_trial_stops_gracefully(tmp_path: Path, ray_local: Any) -> None:
    runs = tmp_path / "runs"
    backend = RayBackend(runs, 1)
    handle = backend.start(TrialSpec("CartPole-v1:ppo", {**TINY, "max_env_steps": 1_000_000}, "", "", {}))
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    while rf.read_run_info(handle.run_dir).progress.env_steps == 0:
        assert time.monotonic() < deadline, "the Ray trial never started training"
        time.sleep(0.1)
    backend.stop(handle)
    while backend.exit_code(handle) is None:
        assert time.monotonic() < deadline, "the cancelled Ray trial did not end"
        time.sleep(0.1)
    info = rf.read_run_info(handle.run_dir)
    assert info.status == rf.RunStatus.STOPPED and info.stop_reason == rf.StopReason.USER_STOPPED
    assert info.progress.env_steps < 1_000_000


def test_gsolve_fix_runs_its_trials_on_ray(tmp_path: Path, ray_local: Any, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    parent = copy_case("lr_low_s0", runs)
    # One seed: this tests the backend (verdicts over seeds are tested on the local pool).
    code = cli.main(["fix", parent, "--runs-dir", str(runs), "--max-trials", "1", "--parallel", "1",
                     "--backend", "ray", "--seeds", "1"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "Verdict: fixed." in out and "solves 1 of 1 seed (" in out
    winner = next(line for line in out.splitlines() if line.startswith("Winner run on seed 0: "))
    assert rf.read_run_info(runs / winner.rsplit(": ", 1)[1]).parent_run_id == parent
