"""The trial runner behind `gsolve fix` / try_fixes: candidates from a diagnosis (hand-built
diagnoses), the coordinator's early stopping and timeout (a scripted backend, no training), and the
experiment record's reader."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from gymnasium_solver import run_folder as rf
from gymnasium_solver.diagnostics.models import (
    Deviation,
    Diagnosis,
    Finding,
    ProgressSummary,
    References,
    ReturnSummary,
    Severity,
    SuggestedChange,
    Trend,
    Verdict,
)
from gymnasium_solver.experiments import NoCandidatesError, build_candidates, read_record, run_experiment
from gymnasium_solver.experiments.candidates import Candidate
from gymnasium_solver.experiments.record import ExperimentRecord, Trial, new_experiment_id, write_record
from gymnasium_solver.jobs import pool as pool_mod
from gymnasium_solver.jobs.backend import TrialHandle, TrialSpec
from gymnasium_solver.run_store import RunStore


# ---------------------------------------------------------------------------------------------
# build_candidates
# ---------------------------------------------------------------------------------------------
def change(key: str, value: Any, current: Any = 0) -> SuggestedChange:
    return SuggestedChange(key=key, current=current, suggested=value, direction="increase", why="test",
                           set_arg=f"{key}={value}")


def finding(fid: str, severity: Severity, *changes: SuggestedChange) -> Finding:
    return Finding(id=fid, severity=severity, score=0.5, title=fid, evidence=[], cause="", suggested_changes=list(changes))


def deviation(key: str, value: Any, preset: Any) -> Deviation:
    return Deviation(key=key, value=value, preset=preset, size="", revert=change(key, preset, value))


def diagnosis(findings: list[Finding], deviations: list[Deviation] | None = None) -> Diagnosis:
    trend = Trend(metric="eval/return_mean", direction="unknown")
    return Diagnosis(
        run_id="20260101-000000-abcd", config_id="CartPole-v1:ppo", algo="ppo", status="completed",
        stop_reason="budget_exhausted", partial=False, verdict=Verdict.WARNING, summary="",
        returns=ReturnSummary(reward_threshold=475, solved=False),
        progress=ProgressSummary(env_steps=1, max_env_steps=1, fraction=1.0), eval_trend=trend, train_trend=trend,
        findings=findings, references=References(deviations=deviations or []),
    )


def test_candidates_findings_first_then_each_revert_then_all() -> None:
    d = diagnosis(
        [finding("kl_low", Severity.WARNING, change("learning_rate", 3e-4), change("n_epochs", 20)),
         finding("side_note", Severity.INFO, change("gamma", 0.99)),
         finding("entropy", Severity.CRITICAL, change("ent_coef", 0.01))],
        [deviation("learning_rate", 1e-5, 0.004), deviation("hidden_sizes", [1], [64, 64])],
    )
    cands = build_candidates(d, {"learning_rate": 1e-5, "hidden_sizes": [1]})
    assert [c.name for c in cands] == ["finding kl_low", "finding entropy", "revert learning_rate",
                                       "revert hidden_sizes", "revert all"]
    # The top finding's changes are applied together, as `gsolve retry` would.
    assert cands[0].changes == {"learning_rate": 3e-4, "n_epochs": 20}
    assert cands[0].set_args == ["learning_rate=0.0003", "n_epochs=20"]
    assert cands[-1].changes == {"learning_rate": 0.004, "hidden_sizes": [64, 64]}
    assert cands[-1].source == "revert_all"


def test_candidates_never_revert_seed_nor_lower_the_budget() -> None:
    d = diagnosis([], [deviation("seed", 3, 0), deviation("max_env_steps", 400_000, 200_000),
                       deviation("n_steps", 4, 32)])
    cands = build_candidates(d, {"seed": 3, "max_env_steps": 400_000, "n_steps": 4})
    assert [c.name for c in cands] == ["revert n_steps"]  # one deviation left: no 'revert all'


def test_candidates_revert_a_budget_that_was_cut() -> None:
    d = diagnosis([], [deviation("max_env_steps", 10_000, 200_000)])
    assert build_candidates(d, {"max_env_steps": 10_000})[0].changes == {"max_env_steps": 200_000}


def test_candidates_are_deduplicated_and_capped() -> None:
    d = diagnosis(
        [finding("a", Severity.WARNING, change("learning_rate", 0.004)),
         finding("b", Severity.WARNING, change("learning_rate", 0.004)),  # same change set as 'a'
         finding("c", Severity.WARNING, change("n_steps", 32)),
         finding("d", Severity.WARNING, change("n_epochs", 5, current=5))],  # the parent already runs it
        [deviation("learning_rate", 1e-5, 0.004)],  # same as 'a'
    )
    cands = build_candidates(d, {"learning_rate": 1e-5, "n_epochs": 5})
    assert [c.name for c in cands] == ["finding a", "finding c"]
    assert [c.name for c in build_candidates(d, {"learning_rate": 1e-5, "n_epochs": 5}, max_trials=1)] == ["finding a"]


def test_no_candidates_says_what_to_do_instead() -> None:
    with pytest.raises(NoCandidatesError, match=r"gsolve retry 20260101-000000-abcd --set key=value"):
        build_candidates(diagnosis([finding("info_only", Severity.INFO, change("gamma", 0.9))]), {})
    with pytest.raises(ValueError, match="max_trials must be between 1 and"):
        build_candidates(diagnosis([]), {}, max_trials=0)


# ---------------------------------------------------------------------------------------------
# the coordinator, on a scripted backend: every poll advances each trial by one step of its script
# ---------------------------------------------------------------------------------------------
class ScriptedBackend:
    """Writes each trial's run.json itself: progress follows a script, one entry per poll.

    A script is a list of env-step counts; a final ``("solved", S)`` entry solves at S. A trial
    whose script runs out completes with budget_exhausted; a stopped trial ends 'stopped'."""

    def __init__(self, runs_dir: Path, scripts: dict[str, list[Any]], capacity: int):
        self.runs_dir, self.scripts, self.capacity = runs_dir, scripts, capacity
        self.started: list[str] = []
        self.stopped: list[str] = []
        self.pos: dict[str, int] = {}

    def start(self, spec: TrialSpec) -> TrialHandle:
        name = next(k for k, v in self.scripts.items() if v and k not in self.started
                    and json.dumps(spec.applied_changes, sort_keys=True) == k)
        self.started.append(name)
        run_id = f"20260101-00000{len(self.started)}-beef"
        run_dir = self.runs_dir / run_id
        run_dir.mkdir(parents=True)
        now = rf.utc_now_iso()
        info = rf.RunInfo(run_id=run_id, config_id="CartPole-v1:ppo", env_id="CartPole-v1", variant="ppo", algo="ppo",
                          seed=spec.overrides.get("seed", 0), created_at=now, updated_at=now, max_env_steps=10**6,
                          host=socket.gethostname(), parent_run_id=spec.parent_run_id,
                          experiment_id=spec.experiment_id, applied_changes=spec.applied_changes,
                          overrides=spec.overrides)
        rf.write_run_info(run_dir, info)
        self.pos[run_id] = 0
        return TrialHandle(run_id, run_dir, name)

    def exit_code(self, handle: TrialHandle) -> int | None:
        info = rf.read_run_info(handle.run_dir)
        if info.status != rf.RunStatus.RUNNING:
            return 130 if info.status == rf.RunStatus.STOPPED else 0
        script, i = self.scripts[handle.token], self.pos[handle.run_id]
        self.pos[handle.run_id] = i + 1
        if handle.token in self.stopped:
            info.status, info.stop_reason = rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED
        elif i >= len(script):
            info.status, info.stop_reason = rf.RunStatus.COMPLETED, rf.StopReason.BUDGET_EXHAUSTED
        elif isinstance(script[i], tuple):
            steps = script[i][1]
            info.progress = rf.Progress(env_steps=steps, wall_seconds=steps / 1000)
            info.solved, info.status, info.stop_reason = True, rf.RunStatus.COMPLETED, rf.StopReason.SOLVED
            info.solved_at = rf.SolvedAt(env_steps=steps, wall_seconds=steps / 1000, iteration=1, eval_return_mean=500)
        else:
            info.progress = rf.Progress(env_steps=script[i], wall_seconds=script[i] / 1000)
        rf.write_run_info(handle.run_dir, info)
        return None  # seen as exited on the next poll, after the coordinator read this state

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        self.stopped.append(handle.token)


def record_for(runs_dir: Path, changes: list[dict[str, Any]], timeout: float = 60.0) -> ExperimentRecord:
    now = rf.utc_now_iso()
    cands = [Candidate(name=f"c{i}", changes=c, set_args=[f"{k}={v}" for k, v in c.items()], source="finding", why="")
             for i, c in enumerate(changes)]
    return ExperimentRecord(experiment_id=new_experiment_id(), parent_run_id="20260101-000000-abcd",
                            config_id="CartPole-v1:ppo", seed=0, parent_overrides={"learning_rate": 1e-5},
                            created_at=now, updated_at=now, timeout_seconds=timeout, candidates=cands,
                            trials=[Trial(candidate=c.name, changes=c.changes, set_args=c.set_args) for c in cands])


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_mod, "POLL_SECONDS", 0.0)


def test_trials_that_cannot_beat_the_solved_one_are_stopped(tmp_path: Path) -> None:
    a, b, c = {"learning_rate": 0.004}, {"n_steps": 64}, {"n_epochs": 20}
    scripts = {json.dumps(a): [2000, ("solved", 4000)],
               json.dumps(b): list(range(2000, 40000, 2000)),
               json.dumps(c): [1000, 2000, 3000, ("solved", 3500)]}
    backend = ScriptedBackend(tmp_path, scripts, capacity=3)
    lines: list[str] = []
    rec = run_experiment(RunStore(tmp_path), record_for(tmp_path, [a, b, c]), backend, progress=lines.append)
    by = {t.candidate: t for t in rec.trials}
    assert by["c0"].outcome == "solved" and by["c0"].solved_at_env_steps == 4000
    assert by["c2"].outcome == "solved" and by["c2"].solved_at_env_steps == 3500
    # c1 was past 4000 env steps once c0 had solved there: stopped long before its 38k budget.
    assert by["c1"].outcome == "stopped_early"
    assert by["c1"].detail.startswith("stopped: cannot beat c") and by["c1"].env_steps < 10_000
    assert rec.winner is not None and rec.winner.candidate == "c2" and rec.winner.solved_at_env_steps == 3500
    assert "--set n_epochs=20" in rec.winner.command and "learning_rate=1.0e-05" in rec.winner.command
    assert rec.status == "done" and len(lines) == 3
    # Each trial carries its provenance and the parent's overrides + its change.
    info = rf.read_run_info(tmp_path / by["c2"].run_id)  # type: ignore[operator]
    assert info.parent_run_id == rec.parent_run_id and info.experiment_id == rec.experiment_id
    assert info.applied_changes == c and info.overrides == {"learning_rate": 1e-5, "n_epochs": 20}
    # The record on disk is what any other process reads.
    assert read_record(tmp_path, rec.experiment_id).winner == rec.winner


def test_capacity_bounds_the_trials_running_at_once(tmp_path: Path) -> None:
    a, b = {"learning_rate": 0.004}, {"n_steps": 64}
    backend = ScriptedBackend(tmp_path, {json.dumps(a): [1000, 2000], json.dumps(b): [("solved", 1000)]}, capacity=1)
    rec = run_experiment(RunStore(tmp_path), record_for(tmp_path, [a, b]), backend)
    assert [t.outcome for t in rec.trials] == ["not_solved", "solved"]
    assert rec.parallel == 1 and rec.winner is not None and rec.winner.candidate == "c1"


def test_timeout_stops_running_trials_and_skips_the_rest(tmp_path: Path) -> None:
    a, b = {"learning_rate": 0.004}, {"n_steps": 64}
    forever = list(range(1, 10**7))
    backend = ScriptedBackend(tmp_path, {json.dumps(a): forever, json.dumps(b): forever}, capacity=1)
    rec = run_experiment(RunStore(tmp_path), record_for(tmp_path, [a, b], timeout=0.2), backend)
    assert [t.outcome for t in rec.trials] == ["stopped_early", "skipped"]
    assert "timeout of 0.2s" in rec.trials[0].detail and rec.winner is None
    assert "No candidate fixed run" in rec.message and "gsolve retry" in rec.message


def test_unknown_experiment_names_close_matches(tmp_path: Path) -> None:
    rec = record_for(tmp_path, [{"learning_rate": 0.004}])
    write_record(tmp_path, rec)
    typo = rec.experiment_id[:-1] + ("0" if rec.experiment_id[-1] != "0" else "1")
    with pytest.raises(ValueError, match=f"did you mean {rec.experiment_id}"):
        read_record(tmp_path, typo)
    # The hidden folder is not a run.
    assert RunStore(tmp_path).run_ids() == []


def test_a_record_whose_coordinator_died_reads_as_crashed(tmp_path: Path) -> None:
    rec = record_for(tmp_path, [{"learning_rate": 0.004}])
    rec.pid, rec.host = 2**22 + 12345, socket.gethostname()  # beyond pid_max: never alive
    write_record(tmp_path, rec)
    got = read_record(tmp_path, rec.experiment_id)
    assert got.status == "crashed" and "coordinator process exited" in got.message


# ---------------------------------------------------------------------------------------------
# parent_overrides: a child starts from the config its parent trained with
# ---------------------------------------------------------------------------------------------
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("case", ["corpus/dqn_target_rare_s0", "heldout2/k08_s43", "heldout8/t08_s299",
                                  "corpus/acrobot_lr_high_s1"])
def test_parent_overrides_rebuild_the_recorded_config_from_todays_preset(case: str) -> None:
    """CartPole-v1:dqn was retuned (stop 19) after its corpus and held-out runs were recorded: their own
    overrides on today's preset would train another config. With the keys the preset changed since,
    they rebuild exactly the config the run trained with (and add nothing when the preset is unchanged)."""
    from gymnasium_solver.config import config_from_yaml_text, resolve_config
    from gymnasium_solver.experiments.parent import parent_config

    run_dir = FIXTURES / case
    info = rf.read_run_info(run_dir)
    recorded = config_from_yaml_text((run_dir / rf.CONFIG_YAML).read_text(), case)
    base = parent_config(run_dir, info).overrides
    assert resolve_config(info.config_id, base) == recorded
    assert {k: base[k] for k in info.overrides} == info.overrides  # the run's own overrides win
    if case.startswith("heldout8"):
        assert base == info.overrides  # recorded after A2C's last retune: nothing to add
    elif info.algo == "dqn":
        assert base["learning_rate"] == 0.0023 and base["train_freq"] == 64  # the SB3-era preset's values


def test_parent_overrides_fall_back_to_the_runs_own_when_its_config_no_longer_validates(tmp_path: Path) -> None:
    from gymnasium_solver.experiments.parent import parent_config

    run_dir = tmp_path / "r"
    run_dir.mkdir()
    info = rf.read_run_info(FIXTURES / "corpus" / "dqn_target_rare_s0")
    (run_dir / rf.CONFIG_YAML).write_text("env_id: CartPole-v1\nvariant: dqn\nalgo: dqn\nno_such_key: 1\n")
    assert parent_config(run_dir, info).overrides == info.overrides
    (run_dir / rf.CONFIG_YAML).write_text("{[: not yaml")
    assert parent_config(run_dir, info).overrides == info.overrides


def test_a_pure_revert_to_the_preset_starts_from_todays_preset_and_a_sized_change_from_the_run() -> None:
    """heldout2 k03 (gradient_steps 1 planted on the SB3-era preset): 'gradient_steps back to the preset's
    32' only makes sense with today's preset around it (32 every 32 steps; the run had train_freq 64).
    k08's gamma with a budget and the exploration fraction sized to the run's anneal needs the run's own."""
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.experiments.parent import is_preset_revert, parent_config

    run_dir = FIXTURES / "heldout2" / "k03_s33"
    info = rf.read_run_info(run_dir)
    parent = parent_config(run_dir, info)
    base, drifted = parent.overrides, parent.drifted
    assert "train_freq" in drifted and base["train_freq"] == 64
    preset_steps = resolve_config("CartPole-v1:dqn").gradient_steps  # type: ignore[union-attr]
    revert = {"gradient_steps": preset_steps}
    assert is_preset_revert("CartPole-v1:dqn", revert)
    assert parent.base_for("CartPole-v1:dqn", revert) == info.overrides
    sized = {"gamma": 0.99, "max_env_steps": 78100, "exploration_fraction": 0.0656}
    assert not is_preset_revert("CartPole-v1:dqn", sized)
    assert parent.base_for("CartPole-v1:dqn", sized) == base
    assert not is_preset_revert("NoSuchEnv-v0:dqn", revert)  # no preset: nothing to return to
