"""`gsolve diagnose` and `gsolve retry` end to end, on corpus runs copied into a tmp runs folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_util import copy_case

from gymnasium_solver.cli.app import main
from gymnasium_solver.config import resolve_config
from gymnasium_solver.config.presets import yaml_value
from gymnasium_solver.contract import run_folder as rf


def test_diagnose_prints_a_readable_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = copy_case("target_kl_tiny_s1", tmp_path)
    assert main(["diagnose", run_id[:17], "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Verdict: WARNING" in out
    assert "1. [warning] Target-KL early stopping cuts most epochs" in out
    # The run trained an older CartPole-v1:ppo: the command keeps its recorded values, and says so.
    # The tiny target_kl is a deviation from the preset's null (no limit): disabling it loosens it, so the
    # finding explains it and its revert leads.
    assert "--set max_env_steps=60000 --set seed=1 --set target_kl=null" in out
    assert "gsolve train CartPole-v1:ppo --set n_envs=16 --set gamma=0.98 --set learning_rate.start=0.004 " in out
    assert "Its preset has changed n_envs, gamma, learning_rate, n_steps, gae_lambda, n_epochs, batch_size, clip_range " \
           "since this run trained: a try command keeps the run's own values" in out
    assert f"gsolve retry {run_id}" in out


def test_diagnose_json_is_the_diagnosis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = copy_case("healthy_s1", tmp_path)
    assert main(["diagnose", "@last", "--json", "--runs-dir", str(tmp_path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["run_id"] == run_id and d["verdict"] == "healthy" and d["returns"]["solved"] is True


def test_unknown_run_is_one_actionable_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_case("healthy_s1", tmp_path)
    assert main(["diagnose", "nosuchrun", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gsolve diagnose: error:") and "Traceback" not in err


def test_retry_of_a_healthy_run_needs_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = copy_case("healthy_s1", tmp_path)
    assert main(["retry", run_id, "--runs-dir", str(tmp_path)]) == 2
    assert "suggests no config change" in capsys.readouterr().err
    assert main(["retry", run_id, "--top", "0", "--runs-dir", str(tmp_path)]) == 2


def test_retry_dry_run_keeps_parent_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = copy_case("ent_high_s1", tmp_path)
    assert main(["retry", run_id, "--dry-run", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ent_coef: 10.0 -> 0.0 " in out
    assert "--set ent_coef=0.0 " in out and "--set max_env_steps=60000" in out and "--set seed=1" in out
    assert len(rf.RunInfo.model_fields) and sorted(p.name for p in tmp_path.iterdir()) == [run_id]  # nothing trained


def test_retry_trains_a_child_that_records_its_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = copy_case("budget_small_s1", tmp_path)
    assert main(["retry", parent, "--quiet", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    children = [p for p in tmp_path.iterdir() if p.name != parent]
    assert len(children) == 1
    child = rf.read_run_info(children[0])
    assert child.parent_run_id == parent
    assert child.applied_changes == {"max_env_steps": 200000}
    assert child.overrides["max_env_steps"] == 200000 and child.overrides["seed"] == 1
    assert "Parent vs retry:" in out and "config max_env_steps: 6000, 200000" in out


def _try_lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("try")]


def test_a_findings_changes_print_as_one_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The exploration fix keeps epsilon's anneal length only with the budget raise it was sized for:
    printed as separate commands, the resized `exploration_fraction` ran on the old 8,000-step budget."""
    run_id = copy_case("dqn_explore_short_s0", tmp_path)
    assert main(["diagnose", run_id, "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    first = _try_lines(out)[0]
    assert first.startswith("try (all together): gsolve train CartPole-v1:dqn")
    # The budget the corrected config needs (solved references needed more than the run's 8,000) and
    # the fraction that keeps the anneal at that budget as long in env steps.
    eps = yaml_value(resolve_config("CartPole-v1:dqn").exploration_final_eps)  # reverted to today's preset's
    for arg in ("--set exploration_fraction=0.0135", f"--set exploration_final_eps={eps}",
                "--set max_env_steps=52200"):
        assert arg in first
    assert first.count("max_env_steps=") == 1  # the run's own budget override is replaced, not repeated
    assert (f"try --set exploration_fraction=0.0135 --set exploration_final_eps={eps} --set max_env_steps=52200"
            in out)


def test_retry_applies_the_top_findings_changes_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As `gsolve fix` tries (and the held-out score measures) them: the target period, the budget it needs
    and the exploration fraction that keeps epsilon's anneal as long in env steps."""
    run_id = copy_case("dqn_target_rare_s0", tmp_path)
    assert main(["retry", run_id, "--dry-run", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    target = resolve_config("CartPole-v1:dqn").target_update_interval  # the preset's value
    assert f"target_update_interval: 100000 -> {target}" in out and "max_env_steps: 20000 -> 52200" in out
    assert "--set exploration_fraction=0.0307" in out.split("equivalent:")[1]


def test_a_reverted_cause_is_not_corrected_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reverting the preset's learning rate undoes the collapse: no entropy bonus on top of the preset."""
    run_id = copy_case("lr_high_s0", tmp_path)
    assert main(["retry", run_id, "--dry-run", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lr = resolve_config("CartPole-v1:ppo").learning_rate  # today's preset: a schedule
    assert f"learning_rate: 0.05 -> {{start: {yaml_value(lr.start)}, end: {yaml_value(lr.end)}}}" in out  # type: ignore[union-attr]
    assert "ent_coef" not in out


def test_a_retry_trains_the_runs_recorded_config_when_its_preset_was_retuned_since(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dqn_target_rare_s0 trained the SB3-era CartPole-v1:dqn (lr 0.0023, batch 64, 64 gradient steps
    every 64 steps); the preset was retuned since (stop 19, issue 23). Its retry changes the target period
    and the budget, and keeps everything else the run had: otherwise the child would test the new preset.
    (Its batch of 64 and its 64 gradient steps are today's preset's values too, so they need no --set.)"""
    run_id = copy_case("dqn_target_rare_s0", tmp_path)
    assert main(["retry", run_id, "--dry-run", "--runs-dir", str(tmp_path)]) == 0
    equivalent = capsys.readouterr().out.split("equivalent:")[1]
    target = resolve_config("CartPole-v1:dqn").target_update_interval
    for arg in ("learning_rate=0.0023", "train_freq=64", "exploration_final_eps=0.04",
                f"target_update_interval={target}"):
        assert f"--set {arg}" in equivalent, arg
