"""`gsolve sweep` (issue 10): the space's validation, a tiny real sweep whose trials are run folders
with the sweep id and trial number and whose study is in SQLite, --resume after a crash, pruning
that stops a trial, and the sweep-status / list views. Trials are CartPole-v1:ppo with tiny budgets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.backend import make_backend
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import launch, report
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import read_record, write_record
from gymnasium_solver.sweeps.runner import run_sweep
from gymnasium_solver.sweeps.space import load_space, parse_space

# Tiny trials: 4 envs, an evaluation every 512 env steps, solved at a low threshold in ~1-3k steps.
TINY = ["n_envs=4", "eval_freq=512", "eval_episodes=2", "batch_size=64", "max_env_steps=3072",
        "reward_threshold=30"]
SPACE = """
learning_rate.start: {type: log_uniform, low: 1.0e-3, high: 1.0e-2}
n_epochs: {type: int, low: 2, high: 6}
gae_lambda: {type: uniform, low: 0.8, high: 0.95}
batch_size: {type: categorical, choices: [32, 64]}
"""


def write_space(tmp_path: Path, text: str = SPACE) -> Path:
    path = tmp_path / "space.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def sets(pairs: list[str]) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


# ---------------------------------------------------------------------------------------------
# The space is validated before any trial starts
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("learning_rte: {type: log_uniform, low: 1.0e-4, high: 1.0e-2}", "did you mean 'learning_rate'"),
    ("gamma: {type: uniform, low: 0.9, high: 1.5}", "gamma=1.5"),
    ("n_steps: {type: int, low: 0, high: 64}", "n_steps=0"),
    ("gamma: {type: uniform, low: 0.99, high: 0.9}", "low < high"),
    ("gamma: {type: normal, mean: 0.9}", "unknown type 'normal'"),
    ("gamma: 0.99", "needs a distribution"),
    ("batch_size: {type: categorical, choices: [64]}", "choices"),
    ("env_id: {type: categorical, choices: [a, b]}", "cannot be searched"),
    ("- just a list", "expected a mapping"),
])
def test_space_errors_are_sentences_before_any_trial(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    text: str, expected: str) -> None:
    runs = tmp_path / "runs"
    code = cli.main(["sweep", "CartPole-v1:ppo", "--space", str(write_space(tmp_path, text)), "--trials", "2",
                     "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Traceback" not in err
    assert not RunStore(runs).run_ids()  # nothing trained
    assert not (runs / ".sweeps").exists() or not list((runs / ".sweeps").glob("*.json"))


def test_cli_input_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = str(tmp_path / "runs")
    space = str(write_space(tmp_path))
    assert cli.main(["sweep", "CartPole-v1:ppo", "--trials", "2", "--runs-dir", runs]) == 2
    assert cli.main(["sweep", "CartPole-v1:ppo", "--space", space, "--trials", "0", "--runs-dir", runs]) == 2
    assert cli.main(["sweep", "CartPole-v1:ppo", "--space", space, "--storage", "nosuchdb://x", "--runs-dir", runs]) == 2
    assert cli.main(["sweep", "CartPole-v1:ppo", "--resume", "sweep-20260101-000000-abcd", "--runs-dir", runs]) == 2
    assert cli.main(["sweep", "CartPole-v1:ppo", "--space", str(tmp_path / "none.yaml"), "--runs-dir", runs]) == 2
    err = capsys.readouterr().err
    assert "--space SPACE.yaml is required" in err and "--trials must be between" in err
    assert "cannot open the sweep storage" in err and "no sweep 'sweep-20260101-000000-abcd'" in err
    assert "cannot read the search space" in err


def test_space_file_round_trip(tmp_path: Path) -> None:
    space = load_space(write_space(tmp_path))
    assert [d.type for d in space.params.values()] == ["log_uniform", "int", "uniform", "categorical"]
    assert parse_space(space.model_dump(mode="json")["params"], "x") == space


# ---------------------------------------------------------------------------------------------
# A tiny real sweep, then --resume after a simulated crash
# ---------------------------------------------------------------------------------------------
def test_sweep_writes_trial_runs_and_a_sqlite_study_and_resumes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    code = cli.main(["sweep", "CartPole-v1:ppo", "--space", str(write_space(tmp_path)), "--trials", "2",
                     "--parallel", "2", "--seed", "1", "--runs-dir", str(runs), *sets(TINY)])
    out, err = capsys.readouterr()
    assert code in (0, 3), out + err  # exactly which is checked below, against the trials' outcomes
    sweep_id = out.split()[1].rstrip(":")
    assert (runs / ".sweeps" / f"{sweep_id}.db").is_file()  # the study, in SQLite inside the runs folder
    assert "Best: trial #" in out and "Reproduce: gsolve train CartPole-v1:ppo --set" in out
    assert "inherits: ppo" in out and "Parameter importances" in out
    assert err.count("] trial ") == 2  # one progress line per finished trial

    record = read_record(runs, sweep_id)
    assert record.status == "done" and record.n_trials == 2
    study = st.open_study(record, create=False)
    trials = study.get_trials()
    assert len(trials) == 2 and all(st.counts_toward_total(t) for t in trials)
    assert code == (0 if any(st.result_of(t).outcome == "solved" for t in trials) else 3)  # "a trial solved"
    for t in trials:
        info = rf.read_run_info(runs / st.result_of(t).run_id)  # type: ignore[operator]
        assert info.sweep_id == sweep_id and info.trial_number == t.number
        assert info.status != rf.RunStatus.RUNNING and not info.placeholder
        assert info.overrides["n_epochs"] == t.params["n_epochs"]
        assert info.overrides["learning_rate"]["start"] == pytest.approx(t.params["learning_rate.start"])

    # A crash: the coordinator died (dead pid) with a trial asked but never told.
    orphan = study.ask()
    orphan_params = {k: d.suggest(orphan, k) for k, d in parse_space(record.space, "s").params.items()}
    record.status, record.pid = "running", 2 ** 22 + 12345  # no such process
    write_record(runs, record)
    assert read_record(runs, sweep_id).status == "crashed"

    code = cli.main(["sweep", "CartPole-v1:ppo", "--resume", sweep_id[:16], "--trials", "3",
                     "--runs-dir", str(runs), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["sweep"]["status"] == "done" and summary["finished"] == 3 and summary["sweep"]["resumes"] == 1
    trials = st.open_study(read_record(runs, sweep_id), create=False).get_trials()
    assert code == (0 if any(st.result_of(t).outcome == "solved" for t in trials) else 3)
    assert st.result_of(trials[orphan.number]).outcome == "interrupted"
    rerun = trials[-1]  # the interrupted trial's values, run again
    assert rerun.params == orphan_params and rf.read_run_info(runs / str(st.result_of(rerun).run_id)).sweep_id == sweep_id

    assert cli.main(["sweep-status", "--runs-dir", str(runs)]) == 0
    assert sweep_id in capsys.readouterr().out
    assert cli.main(["sweep-status", sweep_id, "--runs-dir", str(runs)]) == 0
    assert f"Sweep {sweep_id}" in capsys.readouterr().out
    assert cli.main(["show", str(st.result_of(rerun).run_id), "--runs-dir", str(runs)]) == 0
    assert f"sweep       {sweep_id}, trial {rerun.number}" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# Pruning stops a trial through its run folder
# ---------------------------------------------------------------------------------------------
def test_a_pruned_trial_is_stopped_and_recorded_as_pruned(tmp_path: Path) -> None:
    optuna = st.load_optuna()
    runs = tmp_path / "runs"
    space = parse_space({"n_epochs": {"type": "int", "low": 2, "high": 4}}, "space")
    # An unreachable threshold: the trial cannot solve (and complete) before the coordinator's first poll
    # sees an evaluation, however fast the machine; only pruning can end it before its budget.
    fixed = {"n_envs": 4, "eval_freq": 512, "eval_episodes": 2, "batch_size": 64, "max_env_steps": 200_000,
             "reward_threshold": 1e9}
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", space, n_trials=1, fixed_overrides=fixed)
    store = RunStore(runs)
    # Prunes at the first reported evaluation (the intermediate value is minus the best eval return).
    run_sweep(store, plan.record, space, make_backend(runs, 1), eval_grid=plan.eval_grid,
              pruner=optuna.pruners.ThresholdPruner(upper=-1e6))
    trial = st.open_study(plan.record, create=False).get_trials()[0]
    result = st.result_of(trial)
    assert trial.state.name == "PRUNED" and result.outcome == "pruned" and "pruned at" in result.detail
    info = rf.read_run_info(runs / str(result.run_id))
    assert info.status == rf.RunStatus.STOPPED and info.stop_reason == rf.StopReason.USER_STOPPED
    assert info.progress.env_steps < 200_000  # stopped before its budget
    summary = report.summarize(store, plan.record.sweep_id, diagnose=True)
    assert summary.counts == {"pruned": 1} and summary.best is None
    assert summary.trials[0].diagnosis  # a pruned trial carries its diagnosis summary


def test_only_a_scheduled_evaluation_counts_as_a_reproducible_solve() -> None:
    rows = [512, 1024, 1536, 2048, 2560, 3072, 3584]  # 512 env steps per iteration, eval_freq 2048
    assert st.on_eval_schedule(rows, 2048, 2048)  # crossed 2048: the scheduled evaluation
    assert not st.on_eval_schedule(rows, 3584, 2048)  # a stop's final evaluation between two schedules
    assert st.on_eval_schedule([700, 1400, 2100], 2100, 2048)  # first row at or past the multiple
    assert not st.on_eval_schedule(rows, 4096, 2048)  # no such row


def test_sweep_set_takes_several_overrides_after_one_flag_as_train_does() -> None:
    """`gsolve sweep ... --set seed=0 normalize_observations=true` was refused ("unrecognized arguments") where
    `gsolve train` takes the same words: one --set, several KEY=VALUE, and repeated --set adds more."""
    args = cli.build_parser("sweep").parse_args(["sweep", "CartPole-v1:a2c", "--space", "s.yaml", "--set", "seed=0",
                                             "normalize_observations=true", "--set", "n_envs=8"])
    assert args.overrides == ["seed=0", "normalize_observations=true", "n_envs=8"]
