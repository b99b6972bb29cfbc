"""Sweeps over several seeds per trial, and --resume after a crash, on a scripted backend (no training):
a trial's value is its seed statistic over runs on the config's seed and the next; a trial whose runs
finished while its coordinator was gone is told its value, never re-run; an unfinished one is re-queued."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from shared_util import play_script

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs import pool as pool_mod
from gymnasium_solver.jobs.backend import TrialHandle, TrialSpec
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import launch, report, runner
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.runner import recover_interrupted, run_sweep
from gymnasium_solver.sweeps.space import parse_space

SPACE = parse_space({"n_epochs": {"type": "int", "low": 2, "high": 4}}, "space")
BASE_SEED, BUDGET = 5, 8000
FIXED = {"seed": BASE_SEED, "max_env_steps": BUDGET}


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_mod, "POLL_SECONDS", 0.0)


def plan(runs: Path, *, n_trials: int = 2, seeds_per_trial: int = 1, statistic: str = "p90") -> launch.SweepPlan:
    return launch.prepare_sweep(runs, "CartPole-v1:ppo", SPACE, n_trials=n_trials, parallel=2, fixed_overrides=FIXED,
                                seeds_per_trial=seeds_per_trial, seed_statistic=statistic, sampler_seed=0)


def write_run(runs: Path, run_id: str, seed: int, status: rf.RunStatus, *, solved_at: int | None = None,
              env_steps: int = 0, trial_number: int | None = None, sweep_id: str | None = None) -> None:
    """A run folder's run.json as the trainer leaves it (completed: solved or its budget spent; stopped)."""
    now = rf.utc_now_iso()
    steps = solved_at or env_steps
    info = rf.RunInfo(run_id=run_id, config_id="CartPole-v1:ppo", env_id="CartPole-v1", variant="ppo", algo="ppo",
                      seed=seed, created_at=now, updated_at=now, max_env_steps=BUDGET, host=socket.gethostname(),
                      status=status, progress=rf.Progress(env_steps=steps, wall_seconds=steps / 1000),
                      sweep_id=sweep_id, trial_number=trial_number)
    if status == rf.RunStatus.COMPLETED:
        info.stop_reason = rf.StopReason.SOLVED if solved_at else rf.StopReason.BUDGET_EXHAUSTED
    elif status == rf.RunStatus.STOPPED:
        info.stop_reason = rf.StopReason.USER_STOPPED
    if solved_at:
        info.solved = True
        info.solved_at = rf.SolvedAt(env_steps=solved_at, wall_seconds=solved_at / 1000, iteration=1,
                                     eval_return_mean=500)
    (runs / run_id).mkdir(parents=True)
    rf.write_run_info(runs / run_id, info)


class ScriptedSweepBackend:
    """Each trial run follows ``scripts[(trial_number, seed)]``: env-step counts, one per poll; a final
    ``("solved", S)`` solves at S; a run whose script runs out completes with its budget spent."""

    def __init__(self, runs: Path, scripts: dict[tuple[int, int], list[Any]], capacity: int):
        self.runs, self.scripts, self.capacity = runs, scripts, capacity
        self.started: list[TrialSpec] = []
        self.pos: dict[str, int] = {}

    def start(self, spec: TrialSpec) -> TrialHandle:
        assert spec.trial_number is not None
        self.started.append(spec)
        run_id = f"20260101-{len(self.started):06d}-beef"
        write_run(self.runs, run_id, int(spec.overrides["seed"]), rf.RunStatus.RUNNING,
                  trial_number=spec.trial_number, sweep_id=spec.sweep_id)
        self.pos[run_id] = 0
        return TrialHandle(run_id, self.runs / run_id, (spec.trial_number, int(spec.overrides["seed"])))

    def exit_code(self, handle: TrialHandle) -> int | None:
        info = rf.read_run_info(handle.run_dir)
        if info.status != rf.RunStatus.RUNNING:
            return 130 if info.status == rf.RunStatus.STOPPED else 0
        script, i = self.scripts[handle.token], self.pos[handle.run_id]
        self.pos[handle.run_id] = i + 1
        play_script(handle.run_dir, script, i)
        return None

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        info = rf.read_run_info(handle.run_dir)
        if info.status == rf.RunStatus.RUNNING:
            info.status, info.stop_reason = rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED
            rf.write_run_info(handle.run_dir, info)


# ---------------------------------------------------------------------------------------------
# --seeds-per-trial
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("statistic", "values"), [("p90", (5800.0, 7500.0)), ("iqm", (5000.0, 5500.0))])
def test_a_trial_on_two_seeds_is_valued_by_its_seed_statistic(tmp_path: Path, statistic: str,
                                                             values: tuple[float, float]) -> None:
    """Trial 0 solves seed 5 at 4,000 and seed 6 at 6,000; trial 1 solves seed 5 at 3,000 and spends its
    8,000 budget on seed 6 (counted at 8,000). p90 of (4000, 6000) = 5800, of (3000, 8000) = 7500;
    the IQM of two values is their mean."""
    runs = tmp_path / "runs"
    p = plan(runs, seeds_per_trial=2, statistic=statistic)
    scripts: dict[tuple[int, int], list[Any]] = {
        (0, 5): [1000, ("solved", 4000)], (0, 6): [2000, ("solved", 6000)],
        (1, 5): [("solved", 3000)], (1, 6): [1000, 2000]}
    backend = ScriptedSweepBackend(runs, scripts, capacity=2)
    store = RunStore(runs)
    record = run_sweep(store, p.record, SPACE, backend, eval_grid=p.eval_grid)
    assert record.status == "done"
    trials = st.open_study(record, create=False).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"]
    assert (trials[0].value, trials[1].value) == pytest.approx(values)
    for t, solved, outcome in ((trials[0], 2, "solved"), (trials[1], 1, "not_solved")):
        r = st.result_of(t)
        assert (r.seeds_run, r.seeds_solved, r.outcome) == (2, solved, outcome)
        assert len(r.run_ids) == 2 and r.run_id == r.run_ids[0]
        infos = [rf.read_run_info(runs / run_id) for run_id in r.run_ids]
        assert [i.seed for i in infos] == [BASE_SEED, BASE_SEED + 1]
        assert {(i.trial_number, i.sweep_id) for i in infos} == {(t.number, record.sweep_id)}
    # Every run trained the trial's sampled values on its own seed.
    assert [(s.trial_number, s.overrides["seed"]) for s in backend.started] == [(0, 5), (0, 6), (1, 5), (1, 6)]
    assert all(s.overrides["n_epochs"] == trials[s.trial_number or 0].params["n_epochs"] for s in backend.started)
    # The summary reads as a trial over seeds, not as its first seed's solve and the sum of its seconds.
    text = report.render(report.summarize(store, record.sweep_id))
    assert f"Best: trial #0 {statistic} {values[0]:,.0f} env steps over 2 seeds [run" in text
    assert "solved 2 of 2 seeds" in text and "solved at 4,000" not in text
    assert "ranked on 2 seeds of its own" in text


# ---------------------------------------------------------------------------------------------
# --resume after the coordinator died
# ---------------------------------------------------------------------------------------------
def ask(study: Any, run_ids: list[str]) -> Any:
    """A trial asked and started by a coordinator that then died: RUNNING, its runs in its result."""
    trial = study.ask()
    SPACE.sample(trial)
    trial.set_user_attr("result", st.TrialResult(run_id=run_ids[0], run_ids=run_ids).model_dump())
    return trial


def test_recover_tells_a_trial_whose_runs_finished_and_requeues_one_that_was_stopped(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    record = plan(runs, n_trials=3).record
    store = RunStore(runs)
    write_run(runs, "20260101-000001-aaaa", BASE_SEED, rf.RunStatus.COMPLETED, solved_at=4000)
    write_run(runs, "20260101-000002-aaaa", BASE_SEED, rf.RunStatus.STOPPED, env_steps=3000)
    study = st.open_study(record, create=False)
    finished = ask(study, ["20260101-000001-aaaa"])
    stopped = ask(study, ["20260101-000002-aaaa"])

    assert recover_interrupted(study, store, record) == 1
    trials = {t.number: t for t in study.get_trials()}
    told = trials[finished.number]
    assert told.state.name == "COMPLETE" and told.value == 4000.0
    r = st.result_of(told)
    assert (r.outcome, r.run_id, r.solved_at_env_steps, r.seeds_solved, r.seeds_run) == (
        "solved", "20260101-000001-aaaa", 4000, 1, 1)
    assert "finished while its coordinator was gone" in r.detail
    assert trials[stopped.number].state.name == "FAIL"
    assert st.result_of(trials[stopped.number]).outcome == "interrupted"
    waiting = [t for t in trials.values() if t.state.name == "WAITING"]
    assert [(t.system_attrs["fixed_params"], t.user_attrs["requeued_from"]) for t in waiting] == [
        (stopped.params, stopped.number)]
    assert st.counts_toward_total(told) and not st.counts_toward_total(trials[stopped.number])

    # The resumed sweep trains the re-queued values and one new trial; the finished trial is not run again.
    backend = ScriptedSweepBackend(runs, {(2, BASE_SEED): [("solved", 5000)], (3, BASE_SEED): [("solved", 6000)]},
                                   capacity=1)
    done = run_sweep(store, record, SPACE, backend, eval_grid=1)
    assert done.status == "done" and [s.trial_number for s in backend.started] == [2, 3]
    assert backend.started[0].overrides["n_epochs"] == stopped.params["n_epochs"]
    final = st.open_study(record, create=False).get_trials()
    assert sum(st.counts_toward_total(t) for t in final) == 3 and final[finished.number].value == 4000.0


def test_recover_over_two_seeds_needs_every_seed_finished(tmp_path: Path) -> None:
    """Two seeds finished (solved at 4,000 and 6,000): told p90 = 5,800. A trial with one of its two runs
    started (the other never was): re-queued. A run still recorded 'running' (its trainer killed): re-queued."""
    runs = tmp_path / "runs"
    record = plan(runs, n_trials=4, seeds_per_trial=2).record
    store = RunStore(runs)
    write_run(runs, "20260101-000001-aaaa", BASE_SEED, rf.RunStatus.COMPLETED, solved_at=4000)
    write_run(runs, "20260101-000002-aaaa", BASE_SEED + 1, rf.RunStatus.COMPLETED, solved_at=6000)
    write_run(runs, "20260101-000003-aaaa", BASE_SEED, rf.RunStatus.COMPLETED, solved_at=3000)
    write_run(runs, "20260101-000004-aaaa", BASE_SEED + 1, rf.RunStatus.RUNNING, env_steps=1000)
    study = st.open_study(record, create=False)
    both = ask(study, ["20260101-000001-aaaa", "20260101-000002-aaaa"])
    half = ask(study, ["20260101-000003-aaaa"])
    killed = ask(study, ["20260101-000003-aaaa", "20260101-000004-aaaa"])

    assert recover_interrupted(study, store, record) == 2
    trials = {t.number: t for t in study.get_trials()}
    assert trials[both.number].state.name == "COMPLETE" and trials[both.number].value == pytest.approx(5800.0)
    r = st.result_of(trials[both.number])
    assert (r.seeds_run, r.seeds_solved, r.run_ids) == (2, 2, ["20260101-000001-aaaa", "20260101-000002-aaaa"])
    # Built as a coordinator-run trial's result is (runner.combine_seeds): the same detail and sums.
    assert r.detail == ("finished while its coordinator was gone: solved 2 of 2 seeds; p90 5,800 env steps "
                        "(unsolved seeds at their budget); by seed: 4,000, 6,000")
    assert (r.env_steps, r.seconds, r.solved_at_env_steps) == (10_000, 10.0, 4000)
    assert [trials[n].state.name for n in (half.number, killed.number)] == ["FAIL", "FAIL"]
    waiting = sorted(t.user_attrs["requeued_from"] for t in trials.values() if t.state.name == "WAITING")
    assert waiting == [half.number, killed.number]


def test_wall_objective_detail_keeps_two_decimals(tmp_path: Path) -> None:
    """A wall sweep's seeds solve in about a second: the detail says 1.23 s, not 1 s."""
    record = plan(tmp_path / "runs", seeds_per_trial=2).record.model_copy(update={"objective": "wall"})
    results = [st.TrialResult(run_id=f"r{i}", outcome="solved", env_steps=4000, seconds=s, solved_at_env_steps=4000)
               for i, s in enumerate((1.234, 0.87))]
    value, out = runner.combine_seeds(record, results, [1.234, 0.87])
    assert value == pytest.approx(1.234 - 0.1 * (1.234 - 0.87))
    assert out.detail == "solved 2 of 2 seeds; p90 1.20 s (unsolved seeds at their budget); by seed: 1.23, 0.87"
