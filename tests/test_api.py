"""The notebook API (`from gymnasium_solver import Runs`) on runs the trainer made, and the progress
bar: live on a terminal, never a carriage return into a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from rich.console import Console

from gymnasium_solver import Run, Runs
from gymnasium_solver import run_store as rs
from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, PPOConfig, ReinforceConfig, config_from_yaml_text
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.diagnostics import diagnose_run_dir
from gymnasium_solver.train.progress import ProgressBar

if TYPE_CHECKING:
    from conftest import RealRuns

REPO = Path(__file__).resolve().parent.parent
TINY = {"n_envs": 4, "max_env_steps": 512, "batch_size": 64, "eval_freq": 1024, "eval_episodes": 2}


def test_metrics_is_metrics_csv_as_a_frame(real_runs: RealRuns) -> None:
    runs = Runs(real_runs.runs_dir)
    for run_id in (real_runs.short, real_runs.solved, real_runs.reinforce):
        run = runs.get(run_id)
        csv = run.path / rf.METRICS_CSV
        frame = run.metrics
        pd.testing.assert_frame_equal(frame, pd.read_csv(csv), check_dtype=False)
        assert frame[rf.M.ENV_STEPS].dtype == "int64" and frame[rf.M.ENV_STEPS].is_monotonic_increasing
        empty = pd.read_csv(csv, dtype=str, keep_default_na=False) == ""
        pd.testing.assert_frame_equal(run.not_measured, empty)
        assert run.not_measured[rf.M.EVAL_RETURN_MEAN].any(), "eval columns are empty between evaluations"
        frame.loc[0, rf.M.FPS] = -1.0  # a copy: the store's cached arrays are untouched
        assert run.metrics.loc[0, rf.M.FPS] != -1.0


def test_config_info_checkpoints_and_diagnosis_are_the_stores(real_runs: RealRuns) -> None:
    runs = Runs(real_runs.runs_dir)
    run = runs.get(real_runs.solved)
    assert isinstance(run.config, PPOConfig) and isinstance(runs.get(real_runs.reinforce).config, ReinforceConfig)
    assert run.config == config_from_yaml_text((run.path / rf.CONFIG_YAML).read_text())
    assert run.info == rf.read_run_info(run.path) and run.info.solved and run.status == rf.RunStatus.COMPLETED
    assert run.summary.solved and run.details.summary.run_id == real_runs.solved
    assert [c.name for c in run.checkpoints.checkpoints if c.name == rf.BEST_CHECKPOINT] == [rf.BEST_CHECKPOINT]
    assert run.diagnose() == diagnose_run_dir(rs.RunStore(real_runs.runs_dir), run.path)
    assert run.diagnose().run_id == real_runs.solved
    prefix = real_runs.reinforce[:-1]  # unique: the other runs differ in their time or random suffix
    assert not any(i.startswith(prefix) for i in (real_runs.short, real_runs.solved))
    assert runs.get("@last") == runs[real_runs.reinforce] == runs.get(prefix)
    assert [r.id for r in runs] == [real_runs.reinforce, real_runs.solved, real_runs.short] and len(runs) == 3
    assert real_runs.solved in repr(run) and "CartPole-v1:ppo" in repr(run)


@pytest.mark.parametrize("ref", ["no-such-run", "../etc", "@first", "  "])
def test_bad_references_say_what_the_cli_says(real_runs: RealRuns, ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(rs.RunNotFoundError) as raised:
        Runs(real_runs.runs_dir).get(ref)
    assert cli.main(["show", ref, "--runs-dir", str(real_runs.runs_dir)]) == 2
    assert capsys.readouterr().err == f"gsolve show: error: {raised.value}\n"


def test_list_filters_like_gsolve_runs(real_runs: RealRuns) -> None:
    runs = Runs(real_runs.runs_dir)
    assert [r.id for r in runs.list(algo="reinforce")] == [real_runs.reinforce]
    assert [r.id for r in runs.list(solved=True)] == [real_runs.solved]
    assert [r.id for r in runs.list(env="CartPole-v1", algo="ppo", solved=False)] == [real_runs.short]
    assert [r.id for r in runs.list(limit=2)] == [real_runs.reinforce, real_runs.solved]
    assert [r.id for r in runs.list(limit=None)] == [r.id for r in runs]
    table = runs.table()
    assert list(table.index) == [r.id for r in runs] and table.loc[real_runs.solved, "solved"]
    with pytest.raises(ValueError, match="unknown algo 'dqm'; use one of ppo, reinforce"):
        runs.list(algo="dqm")
    with pytest.raises(ValueError, match="unknown status 'done'"):
        runs.list(status="done")
    with pytest.raises(ValueError, match="limit"):
        runs.list(limit=0)
    with pytest.warns(UserWarning, match="no runs match.*recent environments: CartPole-v1"):
        assert runs.list(env="Pendulum-v1") == []


def test_runs_folder_defaults_like_the_cli_and_refuses_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rf.RUNS_DIR_ENV, str(tmp_path / "elsewhere"))
    assert Runs().runs_dir == rs.RunStore().runs_dir == (tmp_path / "elsewhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        Runs(tmp_path / "file")


def test_plot_and_compare(real_runs: RealRuns) -> None:
    runs = Runs(real_runs.runs_dir)
    fig = runs.get(real_runs.solved).plot()
    (ax,) = fig.axes
    assert ax.get_ylabel() == rf.M.EVAL_RETURN_MEAN
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == [real_runs.solved, "threshold 15"]
    with pytest.raises(ValueError, match="did you mean 'eval/return_mean'"):
        runs.get(real_runs.solved).plot("eval/retrun_mean")
    both = runs.plot(real_runs.short, runs.get(real_runs.solved), metric=rf.M.EP_RETURN_MEAN)
    assert [line.get_label() for line in both.axes[0].get_lines()] == [real_runs.short, real_runs.solved]
    comparison = runs.compare(real_runs.short, runs.get(real_runs.solved))
    assert comparison == rs.compare_runs(rs.RunStore(real_runs.runs_dir), [real_runs.short, real_runs.solved])
    assert comparison.first_to_threshold_env_steps == real_runs.solved
    with pytest.raises(ValueError, match="pass at least two different runs"):  # a ref may name several runs
        runs.compare(real_runs.short)


def test_train_returns_the_run_and_its_progress_bar_writes_no_carriage_return_into_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):  # let rich see the pipe for what it is
        monkeypatch.delenv(name, raising=False)
    read_fd, write_fd = os.pipe()
    pipe = os.fdopen(write_fd, "w", encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", pipe)
        m.setattr(sys, "stderr", pipe)
        run = Runs(tmp_path).train("CartPole-v1:ppo", set={**TINY, "clip_range.end": 0.05}, seed=3)
        pipe.close()
    with os.fdopen(read_fd, encoding="utf-8") as r:
        written = r.read()
    assert isinstance(run, Run) and run.path.parent == tmp_path and run.status == rf.RunStatus.COMPLETED
    assert run.config.seed == 3 and run.config.clip_range.end == 0.05  # type: ignore[union-attr]
    assert run.info.overrides == {**TINY, "clip_range": {"end": 0.05}, "seed": 3}
    assert "\r" not in written and "\x1b" not in written, f"terminal control codes in a pipe: {written!r}"
    assert "\u2026" not in written and "\u2501" not in written, f"a cut line or bar glyphs in a pipe: {written!r}"
    steps = run.info.progress.env_steps
    assert [line for line in written.splitlines() if "steps" in line] == [
        line for line in written.splitlines() if f"{steps}/512 steps" in line and "fps" in line and "eval" in line
    ] and f"{steps}/512 steps" in written, f"expected one final progress line, got {written!r}"
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        Runs(tmp_path).train("CartPole-v1:ppo", set={"learnin_rate": 0.1})
    with pytest.raises(ConfigError, match="set must be a dict"):
        Runs(tmp_path).train("CartPole-v1:ppo", set=[1, 2])  # type: ignore[list-item]


def test_train_takes_any_env_and_a_users_own_class_as_the_cli_flags_do(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", "")  # an id of its own: Gymnasium's registry outlives a test's grants
    with pytest.raises(ConfigError, match="unknown environment 'ApiCorridor-v0'"):
        Runs(tmp_path).train("ApiCorridor-v0:ppo", set=TINY, progress=False)  # nothing named: nothing imported
    run = Runs(tmp_path).train("ApiCorridor-v0:ppo", set=TINY, progress=False, env_class="tests.envs.my_env:Corridor")
    assert run.status == rf.RunStatus.COMPLETED and run.info.config_origin.settings == "default"  # type: ignore[union-attr]
    assert run.config.env_class == "tests.envs.my_env:Corridor"  # recorded: a reload names the flag it needs
    with pytest.raises(ConfigError, match="takes MODULE:CLASS"):
        Runs(tmp_path).train("ApiCorridor-v0:ppo", env_class="tests.envs.my_env")


def test_train_seeds_trains_a_run_per_seed_in_processes_and_judges_them(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    runs = Runs(tmp_path)
    result = runs.train_seeds("CartPole-v1:ppo", [4, 7], set={**TINY, "reward_threshold": 15}, parallel=2)
    assert [r.seed for r in result.runs] == [4, 7] and all(r.solved for r in result.runs)
    assert {runs.get(r.run_id).config.seed for r in result.runs if r.run_id} == {4, 7}  # ordinary runs, listed
    assert result.env_steps.seeds == 2 and result.env_steps.solved == 2 and result.stopped is None
    assert result.env_steps.low == min(r.env_steps or 0 for r in result.runs)
    assert capsys.readouterr().out.count("] seed ") == 2
    with pytest.raises(ConfigError, match="give no 'seed' in set"):
        runs.train_seeds("CartPole-v1:ppo", [1, 2], set={"seed": 3})
    with pytest.raises(ValueError, match="seed 1 is given twice"):
        runs.train_seeds("CartPole-v1:ppo", [1, 1])


def test_progress_bar_redraws_in_place_on_a_terminal() -> None:
    screen = io.StringIO()
    bar = ProgressBar(1000, Console(file=screen, force_terminal=True, width=120))
    bar.update(400, 61.0, 12345.0, 20.5, 100.0)  # the first update always draws
    live = screen.getvalue()
    assert "\r" in live and "400/1000" in live and "12,345 fps" in live and "return 20.5" in live
    assert "eval 100.0" in live and "0:01:01" in live
    bar.close()
    assert "0:01:01\n" in screen.getvalue(), "closing ends the bar's line"


def test_importing_the_package_stays_cheap(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import gymnasium_solver\n"
        "assert 'gymnasium_solver.api' not in sys.modules, 'the API was imported eagerly'\n"
        "from gymnasium_solver import Runs\n"
        f"Runs({str(tmp_path)!r}).get\n"
        "print(','.join(sorted(m for m in ('torch', 'pandas', 'matplotlib', 'gymnasium') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == ""
