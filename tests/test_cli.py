"""The `gsolve` command line as a user meets it: real commands on real runs, errors as one line."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from gymnasium_solver.cli.app import main


def test_compare_shows_results_config_differences_and_who_solved_first(real_runs, capsys) -> None:
    code = main(["compare", real_runs.short, real_runs.solved, "--runs-dir", str(real_runs.runs_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert real_runs.short in out and real_runs.solved in out
    assert "config differences:" in out
    assert "max_env_steps:" in out and "reward_threshold:" in out
    assert f"first to the threshold: {real_runs.solved}" in out


def test_compare_with_an_unknown_run_is_one_actionable_line(real_runs, capsys) -> None:
    code = main(["compare", real_runs.short, "nope", "--runs-dir", str(real_runs.runs_dir)])
    err = capsys.readouterr().err
    assert code == 2
    assert "nope" in err and "gsolve runs" in err
    assert "Traceback" not in err


def test_a_run_folder_path_names_its_run_and_one_outside_names_the_runs_dir(real_runs, tmp_path, capsys) -> None:
    # `gsolve train` ends by printing runs/<id>; users paste it into the next command.
    runs_dir = str(real_runs.runs_dir)
    assert main(["show", f"{runs_dir}/{real_runs.solved}/", "--runs-dir", runs_dir]) == 0
    assert f"run {real_runs.solved}" in capsys.readouterr().out
    assert main(["compare", f"{runs_dir}/{real_runs.short}", real_runs.solved, "--runs-dir", runs_dir]) == 0
    assert f"first to the threshold: {real_runs.solved}" in capsys.readouterr().out
    # A mistyped id inside the runs folder gets the close matches of a mistyped id.
    assert main(["show", f"{runs_dir}/{real_runs.solved[:-1]}x", "--runs-dir", runs_dir]) == 2
    assert real_runs.solved in capsys.readouterr().err
    # A run folder elsewhere is not read: the message says which --runs-dir would reach it.
    elsewhere = tmp_path / "other-runs"
    (elsewhere / real_runs.solved).mkdir(parents=True)
    assert main(["show", str(elsewhere / real_runs.solved), "--runs-dir", runs_dir]) == 2
    assert "is not a run folder (it has no run.json)" in capsys.readouterr().err  # an empty folder is none
    shutil.copy(real_runs.runs_dir / real_runs.solved / "run.json", elsewhere / real_runs.solved)
    assert main(["show", str(elsewhere / real_runs.solved), "--runs-dir", runs_dir]) == 2
    err = capsys.readouterr().err
    assert f"--runs-dir {elsewhere.resolve()}" in err and "Traceback" not in err
    # The runs folder itself, and a folder that holds no runs, named as runs.
    assert main(["show", runs_dir, "--runs-dir", runs_dir]) == 2
    assert "is the runs folder itself" in capsys.readouterr().err
    assert main(["runs", "--runs-dir", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_closed_stdout_pipe_is_not_a_traceback(real_runs) -> None:
    # `gsolve show RUN | head -0` style: the reader is gone before we write anything.
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymnasium_solver.cli.app", "show", real_runs.solved, "--runs-dir", str(real_runs.runs_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_set_takes_several_pairs_at_once_and_bad_keys_name_a_close_match(capsys) -> None:
    assert main(["config", "CartPole-v1:ppo", "--set", "n_envs=8", "gamma=0.9", "--set", "seed=7"]) == 0
    out = capsys.readouterr().out
    assert "n_envs: 8" in out and "gamma: 0.9" in out and "seed: 7" in out
    assert main(["config", "CartPole-v1:ppo", "--set", "n_envs=4", "gama=0.9"]) == 2
    err = capsys.readouterr().err
    assert "'gama'" in err and "did you mean 'gamma'" in err and "Traceback" not in err


def test_a_bad_schedule_value_is_one_plain_message(capsys) -> None:
    assert main(["config", "CartPole-v1:ppo", "--set", "learning_rate=abc"]) == 2
    err = capsys.readouterr().err
    assert "learning_rate: must be a number or a schedule {start: x, end: y} (got 'abc')" in err
    assert "instance of Schedule" not in err


def test_a_mistyped_option_gets_the_commands_usage_and_its_nearest_options(capsys) -> None:
    """A new user's `gsolve train CartPole-v1 --sed 3` got gsolve's top-level usage ('COMMAND ...') and nothing else."""
    with pytest.raises(SystemExit) as exc:
        main(["train", "CartPole-v1", "--sed", "3"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "usage: gsolve train" in err
    assert "unrecognized arguments: --sed 3 (--sed: did you mean --seed or --seeds?)" in err
