"""A run trained with `--no-zoo` (gsolve's defaults where the RL Zoo has an entry) keeps that choice in
every run made from it: a retry, each `gsolve fix` trial and each trial of a `--no-zoo` sweep resolve
the config id without the Zoo, as their parent did. Before, they were resolved with the Zoo's entry,
so a retry of Acrobot-v1:a2c that changed one key also turned on the Zoo's observation normalisation
and doubled n_envs without saying so.

Acrobot-v1:a2c has no preset and a Zoo entry that differs from the defaults in n_envs (16 vs 8) and
normalize_observations (true vs false)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments.changes import record_parent, trial_overrides
from gymnasium_solver.experiments.launch import plan_experiment
from gymnasium_solver.experiments.parent import parent_config
from gymnasium_solver.jobs.backend import ForkBackend
from gymnasium_solver.jobs.trial import TrialSpec
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import launch as sweep_launch
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.runner import SweepJob
from gymnasium_solver.sweeps.space import parse_space

CONFIG_ID = "Acrobot-v1:a2c"
TINY = ["max_env_steps=256", "eval_episodes=1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One --no-zoo run and one with the Zoo's entry, each a few hundred env steps (not solved)."""
    runs_dir = tmp_path_factory.mktemp("runs")
    for extra in (["--no-zoo"], []):
        code = cli.main(["train", CONFIG_ID, *extra, "--set", *TINY, "--runs-dir", str(runs_dir), "--quiet"])
        assert code == 3  # not solved in 256 env steps (exit 3)
    return runs_dir


def _run(runs: Path, settings: str) -> tuple[Path, rf.RunInfo]:
    store = RunStore(runs)
    for run_dir in sorted(p for p in runs.iterdir() if (p / "run.json").is_file()):
        info = store.info(run_dir)
        if info.config_origin is not None and info.config_origin.settings == settings and not info.parent_run_id:
            return run_dir, info
    raise AssertionError(f"no {settings} run in {runs}")


def test_the_parent_config_says_whether_the_run_took_the_zoo(runs: Path) -> None:
    assert parent_config(*_run(runs, "default")).use_zoo is False
    assert parent_config(*_run(runs, "zoo")).use_zoo is True


def test_a_retry_of_a_no_zoo_run_keeps_the_defaults(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, info = _run(runs, "default")
    code = cli.main(["retry", info.run_id, "--dry-run", "--json", "--set", "learning_rate=0.001",
                     "--runs-dir", str(runs)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert " --no-zoo " in f"{out['command']} "
    cfg = resolve_config(CONFIG_ID, out["overrides"], use_zoo=False)
    assert cfg.normalize_observations is False  # the defaults' value, not the Zoo's `normalize: true`
    zoo_run_dir, zoo_info = _run(runs, "zoo")
    code = cli.main(["retry", zoo_info.run_id, "--dry-run", "--json", "--set", "learning_rate=0.001",
                     "--runs-dir", str(runs)])
    assert "--no-zoo" not in json.loads(capsys.readouterr().out)["command"]


def test_every_fix_trial_of_a_no_zoo_run_is_resolved_without_the_zoo(runs: Path) -> None:
    _, info = _run(runs, "default")
    record = plan_experiment(RunStore(runs), info.run_id, seeds=1)
    assert record.use_zoo is False and record_parent(record).use_zoo is False
    assert record.trials
    for trial in record.trials:
        cfg = resolve_config(CONFIG_ID, trial_overrides(record, trial), use_zoo=record.use_zoo)
        assert cfg.normalize_observations is False or "normalize_observations" in trial.changes, trial.changes
    assert record.model_validate_json(record.model_dump_json()).use_zoo is False  # written and read back
    assert plan_experiment(RunStore(runs), _run(runs, "zoo")[1].run_id, seeds=1).use_zoo is True


def test_a_forked_trial_trains_and_records_the_defaults(runs: Path, tmp_path: Path) -> None:
    """The fork backend hands the trainer a resolved config: the run folder keeps where it came from."""
    backend = ForkBackend(tmp_path)
    handle = backend.start(TrialSpec(CONFIG_ID, {"max_env_steps": 256, "eval_episodes": 1}, "", "", {},
                                     use_zoo=False))
    deadline = time.monotonic() + 300  # a bound against a hang, not a timing assertion
    while backend.exit_code(handle) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert backend.exit_code(handle) == 0
    info = RunStore(tmp_path).info(handle.run_dir)
    assert info.config_origin is not None and info.config_origin.settings == "default"
    config = (handle.run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8")
    assert "n_envs: 8" in config and "normalize_observations: false" in config


def test_a_no_zoo_sweep_records_it_and_starts_its_trials_without_the_zoo(tmp_path: Path) -> None:
    space = parse_space({"learning_rate": {"type": "log_uniform", "low": 1e-4, "high": 1e-3}}, "space")
    plan = sweep_launch.prepare_sweep(tmp_path, CONFIG_ID, space, n_trials=1, fixed_overrides={"max_env_steps": 256},
                                      use_zoo=False)
    assert plan.record.use_zoo is False
    record, _, _ = sweep_launch.load_for_resume(tmp_path, plan.record.sweep_id)
    assert record.use_zoo is False
    job = SweepJob(RunStore(tmp_path), record, space, st.open_study(record, create=False), pool=None,  # type: ignore[arg-type]
                   eval_grid=1, progress=None)
    start = job.next_start()
    assert start is not None and start.spec.use_zoo is False


def test_resume_refuses_no_zoo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = parse_space({"learning_rate": {"type": "log_uniform", "low": 1e-4, "high": 1e-3}}, "space")
    plan = sweep_launch.prepare_sweep(tmp_path, CONFIG_ID, space, n_trials=1, use_zoo=False)
    code = cli.main(["sweep", CONFIG_ID, "--resume", plan.record.sweep_id, "--no-zoo", "--runs-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "--no-zoo cannot change it" in err and "\n" not in err.strip()
