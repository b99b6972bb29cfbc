"""The sweep as a job of the one trial pool (jobs.pool): Optuna's ask/tell loop over trial runs.

Up to the backend's capacity, it asks the study for a trial, samples the space, and starts normal
runs (``TrialSpec`` with the sweep id and trial number, which the run folder records): one per seed
of ``record.seeds_per_trial`` (the config's own seed and the next ones). With one seed, it reads each
trial's evaluations from its run folder as they land, reports them to the study, and stops a trial
(SIGTERM: a graceful stop with a final evaluation, the same early stop as ``gsolve fix``) when the
pruner says so, or when it can no longer beat the best solved trial. With several seeds a trial's
value is ``record.seed_statistic`` over its seeds (an unsolved seed counting with its whole budget;
jobs.seeds), told when its last seed has finished. Trials interrupted by a crash, a timeout or a
stop are marked ``interrupted`` and re-queued, so ``--resume`` runs them again; a trial whose runs
all finished before its coordinator died is told its value instead, never re-run.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from gymnasium_solver import config as config_mod
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs import seeds as seeds_mod
from gymnasium_solver.jobs.backend import TrialBackend, TrialHandle, TrialSpec, trial_failed
from gymnasium_solver.jobs.pool import Ended, Start, TrialPool
from gymnasium_solver.jobs.trial import read_progress
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import SweepRecord, format_value, write_record
from gymnasium_solver.sweeps.space import SearchSpace, to_overrides

if TYPE_CHECKING:
    import optuna

Progress = Callable[[str], None]


@dataclass
class _Seed:
    """One seed's run of a trial, and how far the coordinator has read it."""

    seed: int
    claimed: bool = False  # handed to the pool (its handle arrives when it has started)
    handle: TrialHandle | None = None
    value: float | None = None  # for the seed statistic, once done
    result: st.TrialResult = field(default_factory=st.TrialResult)
    evals_seen: int = 0
    reported_steps: set[int] = field(default_factory=set)
    pruned: bool = False
    done: bool = False


@dataclass
class _Group:
    """An Optuna trial and its runs, one per seed."""

    trial: optuna.Trial
    overrides: dict[str, Any]
    seeds: list[_Seed]

    def next_seed(self) -> int | None:
        return next((i for i, s in enumerate(self.seeds) if not s.claimed and not s.done), None)


def seed_value(objective: str, info: rf.RunInfo) -> float:
    """One seed's value for the seed statistic: to solve, or (unsolved) the whole budget it had."""
    if info.solved and info.solved_at is not None:
        return st.solved_value(objective, info)
    if objective == "steps":
        return float(max(info.max_env_steps or 0, info.progress.env_steps))
    return float(info.progress.wall_seconds)


class SweepJob:
    """The sweep's policy for the trial pool: keys are (trial number, seed index)."""

    def __init__(self, store: RunStore, record: SweepRecord, space: SearchSpace, study: optuna.Study,
                 pool: TrialPool, eval_grid: int, progress: Progress | None):
        self.store, self.record, self.space, self.study, self.pool = store, record, space, study, pool
        self.eval_grid, self.progress = max(1, eval_grid), progress
        self.groups: dict[int, _Group] = {}  # trials still to be told
        self.every: dict[int, _Group] = {}  # ... and those told, whose runs may still be stopping
        self.best_solved: float | None = None
        self.n_seeds = record.seeds_per_trial
        base = config_mod.resolve_config(record.config_id, record.fixed_overrides, use_zoo=record.use_zoo).seed
        self.seeds = seeds_mod.seed_list(int(base), self.n_seeds)
        for t in study.get_trials(deepcopy=False, states=(st.load_optuna().trial.TrialState.COMPLETE,)):
            if st.result_of(t).outcome == "solved" and t.value is not None:
                self.best_solved = t.value if self.best_solved is None else min(self.best_solved, t.value)

    def finished(self) -> int:
        return sum(1 for t in self.study.get_trials(deepcopy=False) if st.counts_toward_total(t))

    # -- the pool's questions --------------------------------------------------------------
    def next_start(self) -> Start | None:
        for number, g in self.groups.items():  # a started trial's next seed first
            i = g.next_seed()
            if i is not None:
                return self._start(number, g, i)
        if self.finished() + len(self.groups) >= self.record.n_trials:
            return None
        trial = self.study.ask()
        overrides = to_overrides(self.space.sample(trial), self.record.fixed_overrides)
        g = _Group(trial, overrides, [_Seed(s) for s in self.seeds])
        self.groups[trial.number] = self.every[trial.number] = g
        return self._start(trial.number, g, 0)

    def _start(self, number: int, g: _Group, i: int) -> Start:
        overrides = dict(g.overrides) | ({"seed": g.seeds[i].seed} if self.n_seeds > 1 else {})
        g.seeds[i].claimed = True
        spec = TrialSpec(self.record.config_id, overrides, parent_run_id="", experiment_id="", applied_changes={},
                         sweep_id=self.record.sweep_id, trial_number=number, use_zoo=self.record.use_zoo)
        return Start((number, i), spec)

    def started(self, key: Hashable, handle: TrialHandle) -> None:
        g, s = self._at(key)
        s.handle, s.result.run_id = handle, handle.run_id
        ids = [x.result.run_id for x in g.seeds if x.result.run_id]
        g.trial.set_user_attr("result", st.TrialResult(run_id=ids[0], run_ids=ids).model_dump())

    def start_failed(self, key: Hashable, error: str) -> None:  # e.g. n_envs * n_steps over a cross-field limit
        g, _ = self._at(key)
        self._tell(g, None, st.TrialResult(outcome="failed", detail=error))

    def should_stop(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> str | None:
        g, s = self._at(key)
        self._read(s, info)
        if self.n_seeds > 1 or info.solved or g.trial.number not in self.groups:
            return None  # several seeds: the trial's value is known only when all have run
        if self._report_evals(key, s) and self._at(key)[0].trial.should_prune():
            s.pruned = True
            return f"pruned at {info.progress.env_steps:,} env steps (best eval {s.result.best_eval}: below the " \
                   f"median of earlier trials at that point)"
        if self.best_solved is not None:
            spent = info.progress.env_steps if self.record.objective == "steps" else info.progress.wall_seconds
            if spent > self.best_solved:
                s.pruned = True
                unit = "env steps" if self.record.objective == "steps" else "s"
                return f"stopped: cannot beat the best solved trial ({self.best_solved:,.0f} {unit})"
        return None

    def recorded(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> None:
        pass  # nothing waits on one run's result: it is read when its process has exited

    def ended(self, end: Ended) -> None:
        g, s = self._at(end.key)
        info = end.info
        if info is not None:
            self._read(s, info)
            info = self._unscheduled_solve(s, info, end.stop_detail)
        self._finish_seed(s, info, end)
        s.done = True
        if all(x.done for x in g.seeds) and g.trial.number in self.groups:
            self._conclude(g)

    def skip_pending(self, why: str) -> None:
        for g in list(self.groups.values()):
            if any(x.claimed and not x.done for x in g.seeds):
                continue  # running seeds: the group ends with them
            if any(x.done for x in g.seeds):  # some seeds ran, the rest never will: run it again on --resume
                for x in g.seeds:
                    x.done = True
                self._tell(g, None, st.TrialResult(outcome="interrupted", detail=why))

    def save(self, message: str | None = None) -> None:
        self.record.message = message or (f"running: {self.finished()}/{self.record.n_trials} trials finished, "
                                          f"{len(self.groups)} training")
        write_record(self.store.runs_dir, self.record)

    # -- reading a run ---------------------------------------------------------------------
    def _at(self, key: Hashable) -> tuple[_Group, _Seed]:
        number, i = cast(tuple[int, int], key)
        g = self.every[number]
        return g, g.seeds[i]

    def _read(self, s: _Seed, info: rf.RunInfo) -> None:
        read_progress(s.result, info)

    def _report_evals(self, key: Hashable, s: _Seed) -> bool:
        """Report each new evaluation (best eval so far, negated) at its eval_freq step; True if any was new."""
        assert s.handle is not None
        run_dir, trial = s.handle.run_dir, self._at(key)[0].trial
        try:
            self.store.prefetch_columns(run_dir, (rf.M.EVAL_RETURN_MEAN, rf.M.ENV_STEPS))  # one parse
            returns, missing = self.store.metric_column(run_dir, rf.M.EVAL_RETURN_MEAN)
            steps, _ = self.store.metric_column(run_dir, rf.M.ENV_STEPS)
        except (ValueError, KeyError):
            return False  # no metrics.csv yet (the trainer is starting)
        if len(returns) == s.evals_seen:
            return False
        reported = False
        best: float | None = None
        for i in range(len(returns)):
            if missing[i]:
                continue
            best = float(returns[i]) if best is None else max(best, float(returns[i]))
            step = int(steps[i]) // self.eval_grid
            if i >= s.evals_seen and step not in s.reported_steps:
                trial.report(-best, step)
                s.reported_steps.add(step)
                reported = True
        s.evals_seen = len(returns)
        return reported

    def _unscheduled_solve(self, s: _Seed, info: rf.RunInfo, stop_detail: str | None) -> rf.RunInfo:
        """A trial stopped, whose final evaluation (off the schedule, other eval seeds) reached the
        threshold: not a result its `gsolve train` command reproduces, so it stays what the coordinator made it."""
        if not (info.solved and info.solved_at is not None and stop_detail is not None):
            return info
        assert s.handle is not None
        try:
            eval_freq = int(self.store.config(s.handle.run_dir)["eval_freq"])
            steps, _ = self.store.metric_column(s.handle.run_dir, rf.M.ENV_STEPS)
            on_schedule = st.on_eval_schedule([int(x) for x in steps], info.solved_at.env_steps, eval_freq)
        except (ValueError, KeyError, TypeError):
            on_schedule = False
        if on_schedule:
            return info
        s.result.solved_at_env_steps, s.result.seconds = None, round(info.progress.wall_seconds, 2)
        s.result.detail = (f"; its final evaluation after the stop reached the threshold at "
                           f"{info.solved_at.env_steps:,} env steps, off the evaluation schedule (not counted)")
        return info.model_copy(update={"solved": False})

    def _finish_seed(self, s: _Seed, info: rf.RunInfo | None, end: Ended) -> None:
        r, note = s.result, s.result.detail
        if info is not None and info.solved:
            r.outcome, r.detail = "solved", f"solved at {r.solved_at_env_steps:,} env steps in {r.seconds}s"
        elif end.ending is not None and end.stop_detail is not None and end.stop_detail.startswith(end.ending):
            r.outcome, r.detail = "interrupted", end.ending
        elif s.pruned and not (info is not None and info.status == rf.RunStatus.FAILED):
            r.outcome, r.detail = "pruned", (end.stop_detail or "pruned") + note
        elif trial_failed(info, end.exit_code):
            why = info.failure.message if info is not None and info.failure is not None else f"exit code {end.exit_code}"
            r.outcome, r.detail = "failed", f"{why}; see gsolve diagnose {r.run_id}"
        else:
            assert info is not None
            best = f", best eval {r.best_eval:.4g}" if r.best_eval is not None else ""
            r.outcome, r.detail = "not_solved", f"{info.stop_reason or info.status} after {r.env_steps:,} env steps{best}"
        s.value = seed_value(self.record.objective, info) if info is not None else None

    # -- telling the study -----------------------------------------------------------------
    def _conclude(self, g: _Group) -> None:
        results = [x.result for x in g.seeds]
        if self.n_seeds == 1:
            r = results[0]
            solved = r.outcome == "solved" and r.solved_at_env_steps is not None
            value = (g.seeds[0].value if solved
                     else st.unsolved_value(r.best_eval) if r.outcome == "not_solved" else None)
            self._tell(g, value, r)
            return
        self._tell(g, *combine_seeds(self.record, [x.result for x in g.seeds], [x.value or 0.0 for x in g.seeds]))

    def _tell(self, g: _Group, value: float | None, r: st.TrialResult) -> None:
        TrialState = st.load_optuna().trial.TrialState
        trial = g.trial
        self.groups.pop(trial.number, None)
        trial.set_user_attr("result", r.model_dump())
        if r.outcome == "solved" and value is not None:
            self.best_solved = value if self.best_solved is None else min(self.best_solved, value)
        if r.outcome in ("solved", "not_solved") and value is not None:
            self.study.tell(trial, value)
        elif r.outcome == "pruned":
            self.study.tell(trial, state=TrialState.PRUNED)
        else:
            self.study.tell(trial, state=TrialState.FAIL)
        if r.outcome == "interrupted":  # run it again on --resume, with the same values
            self.study.enqueue_trial(trial.params, user_attrs={"requeued_from": trial.number})
        for x in g.seeds:
            if x.handle is not None and not x.done:
                self.pool.stop((trial.number, g.seeds.index(x)), f"stopped: trial {trial.number} ended ({r.outcome})")
        self._say(f"[{self.finished()}/{self.record.n_trials}] trial {trial.number}: {r.outcome} - {r.detail}"
                  + (f" [run {r.run_id}]" if r.run_id else ""))
        self.save()

    def _say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)


def combine_seeds(record: SweepRecord, results: list[st.TrialResult],
                  values: list[float]) -> tuple[float | None, st.TrialResult]:
    """One trial's value and result from its seeds' (``values``: each seed's :func:`seed_value`): the
    record's seed statistic over them; no value when a seed was interrupted or failed. The one place a
    multi-seed result is built, for a trial the coordinator ran and for one that finished without it."""
    ids = [r.run_id for r in results if r.run_id]
    for bad in ("interrupted", "failed"):
        hit = next((r for r in results if r.outcome == bad), None)
        if hit is not None:
            return None, st.TrialResult(run_id=ids[0] if ids else None, run_ids=ids, outcome=bad,  # type: ignore[arg-type]
                                        detail=f"seed run {hit.run_id}: {hit.detail}")
    solved = sum(r.outcome == "solved" for r in results)
    stat = record.seed_statistic
    evals = [r.best_eval for r in results if r.best_eval is not None]
    out = st.TrialResult(run_id=ids[0] if ids else None, run_ids=ids, env_steps=sum(r.env_steps for r in results),
                         seconds=round(sum(r.seconds or 0.0 for r in results), 2), best_eval=min(evals) if evals else None,
                         solved_at_env_steps=results[0].solved_at_env_steps, seeds_solved=solved, seeds_run=len(results))
    if solved == 0:
        out.outcome, out.detail = "not_solved", f"solved 0 of {len(results)} seeds"
        return st.unsolved_value(out.best_eval), out
    value = seeds_mod.aggregate(values, stat)
    unit = "env steps" if record.objective == "steps" else "s"
    # A majority of seeds solved makes the trial 'solved' (a sweep check re-trains those).
    out.outcome = "solved" if solved * 2 > len(results) else "not_solved"
    out.detail = (f"solved {solved} of {len(results)} seeds; {stat} {format_value(value, record.objective)} {unit} "
                  f"(unsolved seeds at their budget); by seed: "
                  f"{', '.join(format_value(v, record.objective) for v in values)}")
    return value, out


def _finished_value(store: RunStore, record: SweepRecord, run_ids: list[str]) -> tuple[float, st.TrialResult] | None:
    """The value of a trial whose runs all ran to their own end (solved or budget spent) while nobody
    was coordinating them; None when any was stopped, failed or is missing (then it runs again)."""
    if len(run_ids) != record.seeds_per_trial:
        return None
    infos = []
    for run_id in run_ids:
        try:
            info = store.info(store.runs_dir / run_id)
        except ValueError:
            return None
        if info.status != rf.RunStatus.COMPLETED:
            return None
        infos.append(info)
    per_seed = [st.TrialResult(run_id=i.run_id, outcome="solved" if i.solved else "not_solved",
                               env_steps=i.progress.env_steps, best_eval=i.best_eval.return_mean if i.best_eval else None,
                               solved_at_env_steps=i.solved_at.env_steps if i.solved and i.solved_at else None,
                               seconds=round(i.solved_at.wall_seconds if i.solved and i.solved_at
                                             else i.progress.wall_seconds, 2)) for i in infos]
    value, r = combine_seeds(record, per_seed, [seed_value(record.objective, i) for i in infos])
    assert value is not None  # every seed completed: none interrupted or failed
    r.detail = f"finished while its coordinator was gone: {r.detail}"
    return value, r


def recover_interrupted(study: optuna.Study, store: RunStore | None = None, record: SweepRecord | None = None) -> int:
    """Trials left RUNNING by a coordinator that died: told their value when every run of theirs had
    finished by itself; otherwise marked interrupted and their values queued again. Returns how many were re-queued."""
    optuna = st.load_optuna()
    n = 0
    for frozen in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        r = st.result_of(frozen)
        done = (_finished_value(store, record, r.run_ids or ([r.run_id] if r.run_id else []))
                if store is not None and record is not None else None)
        trial = optuna.Trial(study, frozen._trial_id)
        if done is not None:
            trial.set_user_attr("result", done[1].model_dump())
            study.tell(frozen.number, done[0])
            continue
        r.outcome, r.detail = "interrupted", "its coordinator stopped before the trial finished; re-queued"
        trial.set_user_attr("result", r.model_dump())
        study.tell(frozen.number, state=optuna.trial.TrialState.FAIL)
        study.enqueue_trial(frozen.params, user_attrs={"requeued_from": frozen.number})
        n += 1
    return n


def run_sweep(store: RunStore, record: SweepRecord, space: SearchSpace, backend: TrialBackend, *,
              eval_grid: int, progress: Progress | None = None,
              pruner: optuna.pruners.BasePruner | None = None) -> SweepRecord:
    """Run the sweep until ``record.n_trials`` trials have finished (or its timeout / a stop signal).

    The study must exist (see :func:`gymnasium_solver.sweeps.launch.prepare_sweep`). Returns the
    finished record; the trials are in the study. ``pruner`` replaces the median pruner.
    """
    study = st.open_study(record, create=False, pruner=pruner)
    recovered = recover_interrupted(study, store, record)
    record.pid, record.host, record.status = os.getpid(), socket.gethostname(), "running"
    record.parallel = backend.capacity
    pool = TrialPool(store, backend)
    job = SweepJob(store, record, space, study, pool, eval_grid, progress)
    job.save(f"running: {job.finished()}/{record.n_trials} trials finished"
             + (f" ({recovered} interrupted trials re-queued)" if recovered else ""))
    ending = pool.run(job, record.timeout_seconds, "sweep")
    record.status, record.finished_at = "done", rf.utc_now_iso()
    done = job.finished()
    job.save(f"{done} of {record.n_trials} trials finished"
             + (f" ({ending.removeprefix('stopped: ')}; continue with --resume {record.sweep_id})" if ending else ""))
    return record
