"""The sweep coordinator: Optuna's ask/tell loop driving trial runs on a trial backend.

Up to the backend's capacity, it asks the study for a trial, samples the space, and starts a normal
run (``TrialSpec`` with the sweep id and trial number, which the run folder records). While trials
train it reads each one's evaluations from its run folder as they land, reports them to the study,
and stops a trial (SIGTERM: a graceful stop with a final evaluation, the same early stop as
``gsolve fix``) when the pruner says so, or when it can no longer beat the best solved trial. When
the trial's process has exited it tells the study the value. Trials interrupted by a crash, a
timeout or a stop are marked ``interrupted`` and re-queued, so ``--resume`` runs them again.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from gymnasium_solver import run_folder as rf
from gymnasium_solver import run_writer
from gymnasium_solver.experiments.backend import TrialBackend, TrialHandle, TrialSpec, trial_failed
from gymnasium_solver.experiments.runner import STOP_GRACE_SECONDS
from gymnasium_solver.run_guards import stop_on_signals
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import SweepRecord, write_record
from gymnasium_solver.sweeps.space import SearchSpace, to_overrides

if TYPE_CHECKING:
    import optuna

POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 5.0
Progress = Callable[[str], None]


class _Active:
    """A started trial: its Optuna trial, its run, and how far the coordinator has read it."""

    def __init__(self, trial: optuna.Trial, handle: TrialHandle):
        self.trial, self.handle = trial, handle
        self.result = st.TrialResult(run_id=handle.run_id)
        self.evals_seen = 0
        self.reported_steps: set[int] = set()
        self.stop_detail: str | None = None
        self.pruned = False
        self.released = False  # recorded its end or asked to stop: its slot goes to the next trial
        self.released_at = 0.0
        self.killed = False


class SweepCoordinator:
    def __init__(self, store: RunStore, record: SweepRecord, space: SearchSpace, study: optuna.Study,
                 backend: TrialBackend, eval_grid: int, progress: Progress | None):
        self.store, self.record, self.space, self.study = store, record, space, study
        self.backend, self.eval_grid, self.progress = backend, max(1, eval_grid), progress
        self.active: list[_Active] = []
        self.last_write = 0.0
        self.best_solved: float | None = None
        for t in study.get_trials(deepcopy=False, states=(st.load_optuna().trial.TrialState.COMPLETE,)):
            if st.result_of(t).outcome == "solved" and t.value is not None:
                self.best_solved = t.value if self.best_solved is None else min(self.best_solved, t.value)

    # -- bookkeeping ---------------------------------------------------------------------------
    def finished(self) -> int:
        return sum(1 for t in self.study.get_trials(deepcopy=False) if st.counts_toward_total(t))

    def save(self, message: str | None = None) -> None:
        if message is not None:
            self.record.message = message
        write_record(self.store.runs_dir, self.record)
        self.last_write = time.monotonic()

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)

    # -- starting ------------------------------------------------------------------------------
    def start_one(self) -> None:
        trial = self.study.ask()
        values = self.space.sample(trial)
        overrides = to_overrides(values, self.record.fixed_overrides)
        spec = TrialSpec(self.record.config_id, overrides, parent_run_id="", experiment_id="",
                         applied_changes={}, sweep_id=self.record.sweep_id, trial_number=trial.number)
        try:
            handle = self.backend.start(spec)
        except (ValueError, OSError) as exc:  # e.g. n_envs * n_steps over a cross-field limit
            self._tell(trial, None, st.TrialResult(outcome="failed", detail=f"could not start: {exc}"))
            return
        trial.set_user_attr("result", st.TrialResult(run_id=handle.run_id).model_dump())
        self.active.append(_Active(trial, handle))

    def running(self) -> int:
        return sum(not a.released for a in self.active)

    # -- polling -------------------------------------------------------------------------------
    def poll(self, ending: str | None) -> None:
        for a in list(self.active):
            code = self.backend.exit_code(a.handle)
            info = self._read(a)  # after the exit check: it sees the trial's final write
            if code is not None:
                if info is not None and info.status == rf.RunStatus.RUNNING:
                    run_writer.record_forced_stop(a.handle.run_dir, info, a.stop_detail or f"exited with code {code}")
                    info = self._read(a)
                self._finish(a, info, code, ending)
                self.active.remove(a)
                continue
            now = time.monotonic()
            if not a.released and info is not None and info.status != rf.RunStatus.RUNNING:
                a.released, a.released_at = True, now
            if not a.released:
                reason = ending or self._should_stop(a, info)
                if reason is not None:
                    self.backend.stop(a.handle)
                    a.released, a.released_at, a.stop_detail = True, now, reason
            elif not a.killed and now - a.released_at > STOP_GRACE_SECONDS:
                self.backend.stop(a.handle, force=True)
                a.killed = True

    def _read(self, a: _Active) -> rf.RunInfo | None:
        try:
            info = self.store.info(a.handle.run_dir)
        except ValueError:
            return None
        r = a.result
        r.env_steps = info.progress.env_steps
        r.best_eval = info.best_eval.return_mean if info.best_eval else None
        if info.solved and info.solved_at is not None:
            r.solved_at_env_steps = info.solved_at.env_steps
            r.seconds = round(info.solved_at.wall_seconds, 2)
        else:
            r.seconds = round(info.progress.wall_seconds, 2)
        return info

    def _report_evals(self, a: _Active) -> bool:
        """Report each new evaluation (best eval so far, negated) at its eval_freq step; True if any was new."""
        try:
            self.store.prefetch_columns(a.handle.run_dir, (rf.M.EVAL_RETURN_MEAN, rf.M.ENV_STEPS))  # one parse
            returns, missing = self.store.metric_column(a.handle.run_dir, rf.M.EVAL_RETURN_MEAN)
            steps, _ = self.store.metric_column(a.handle.run_dir, rf.M.ENV_STEPS)
        except (ValueError, KeyError):
            return False  # no metrics.csv yet (the trainer is starting)
        if len(returns) == a.evals_seen:
            return False
        reported = False
        best: float | None = None
        for i in range(len(returns)):
            if missing[i]:
                continue
            best = float(returns[i]) if best is None else max(best, float(returns[i]))
            step = int(steps[i]) // self.eval_grid
            if i >= a.evals_seen and step not in a.reported_steps:
                a.trial.report(-best, step)
                a.reported_steps.add(step)
                reported = True
        a.evals_seen = len(returns)
        return reported

    def _should_stop(self, a: _Active, info: rf.RunInfo | None) -> str | None:
        if info is None or info.solved:
            return None
        if self._report_evals(a) and a.trial.should_prune():
            a.pruned = True
            return f"pruned at {info.progress.env_steps:,} env steps (best eval {a.result.best_eval}: below the " \
                   f"median of earlier trials at that point)"
        if self.best_solved is not None:
            spent = info.progress.env_steps if self.record.objective == "steps" else info.progress.wall_seconds
            if spent > self.best_solved:
                a.pruned = True
                unit = "env steps" if self.record.objective == "steps" else "s"
                return f"stopped: cannot beat the best solved trial ({self.best_solved:,.0f} {unit})"
        return None

    # -- finishing -----------------------------------------------------------------------------
    def _solved_on_schedule(self, a: _Active, info: rf.RunInfo) -> bool:
        """Whether the solving evaluation was a scheduled one (the first at or past a multiple of
        eval_freq), not the extra final evaluation of a graceful stop: only a scheduled one is what
        the trial's `gsolve train` command reproduces."""
        assert info.solved_at is not None
        try:
            eval_freq = int(self.store.config(a.handle.run_dir)["eval_freq"])
            steps, _ = self.store.metric_column(a.handle.run_dir, rf.M.ENV_STEPS)
        except (ValueError, KeyError, TypeError):
            return False
        return st.on_eval_schedule([int(s) for s in steps], info.solved_at.env_steps, eval_freq)

    def _finish(self, a: _Active, info: rf.RunInfo | None, code: int, ending: str | None) -> None:
        r = a.result
        failed = trial_failed(info, code)
        if (info is not None and info.solved and info.solved_at is not None and a.stop_detail is not None
                and not self._solved_on_schedule(a, info)):
            # Stopped, then its final evaluation (off the schedule, other eval seeds) reached the threshold:
            # not a result the command reproduces, so it stays what the coordinator made it.
            r.solved_at_env_steps, r.seconds = None, round(info.progress.wall_seconds, 2)
            a.stop_detail += (f"; its final evaluation after the stop reached the threshold at "
                              f"{info.solved_at.env_steps:,} env steps, off the evaluation schedule (not counted)")
            info = info.model_copy(update={"solved": False})
        if info is not None and info.solved:
            r.outcome, r.detail = "solved", f"solved at {r.solved_at_env_steps:,} env steps in {r.seconds}s"
            solved = st.solved_value(self.record.objective, info)
            self.best_solved = solved if self.best_solved is None else min(self.best_solved, solved)
            value: float | None = solved
        elif ending is not None and a.stop_detail is not None and a.stop_detail.startswith(ending):
            r.outcome, r.detail, value = "interrupted", ending, None
        elif a.pruned and not (info is not None and info.status == rf.RunStatus.FAILED):
            r.outcome, r.detail, value = "pruned", a.stop_detail or "pruned", None
        elif failed:
            why = info.failure.message if info is not None and info.failure is not None else f"exit code {code}"
            r.outcome, r.detail, value = "failed", f"{why}; see gsolve diagnose {r.run_id}", None
        else:
            assert info is not None
            best = f", best eval {r.best_eval:.4g}" if r.best_eval is not None else ""
            r.outcome, r.detail = "not_solved", f"{info.stop_reason or info.status} after {r.env_steps:,} env steps{best}"
            value = st.unsolved_value(r.best_eval)
        self._tell(a.trial, value, r)

    def _tell(self, trial: optuna.Trial, value: float | None, r: st.TrialResult) -> None:
        TrialState = st.load_optuna().trial.TrialState
        trial.set_user_attr("result", r.model_dump())
        if r.outcome in ("solved", "not_solved"):
            self.study.tell(trial, value)
        elif r.outcome == "pruned":
            self.study.tell(trial, state=TrialState.PRUNED)
        else:
            self.study.tell(trial, state=TrialState.FAIL)
        if r.outcome == "interrupted":  # run it again on --resume, with the same values
            self.study.enqueue_trial(trial.params, user_attrs={"requeued_from": trial.number})
        self.say(f"[{self.finished()}/{self.record.n_trials}] trial {trial.number}: {r.outcome} - {r.detail}"
                 + (f" [run {r.run_id}]" if r.run_id else ""))
        self.save()


def recover_interrupted(study: optuna.Study) -> int:
    """Trials left RUNNING by a coordinator that died: mark them interrupted and queue their values again."""
    optuna = st.load_optuna()
    n = 0
    for frozen in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        trial = optuna.Trial(study, frozen._trial_id)
        r = st.result_of(frozen)
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
    recovered = recover_interrupted(study)
    record.pid, record.host, record.status = os.getpid(), socket.gethostname(), "running"
    record.parallel = backend.capacity
    c = SweepCoordinator(store, record, space, study, backend, eval_grid, progress)
    c.save(f"running: {c.finished()}/{record.n_trials} trials finished"
           + (f" ({recovered} interrupted trials re-queued)" if recovered else ""))
    deadline = time.monotonic() + record.timeout_seconds
    ending: str | None = None
    with stop_on_signals() as stop_requested:
        try:
            while True:
                if ending is None and stop_requested():
                    ending = "stopped: the sweep was stopped"
                elif ending is None and time.monotonic() >= deadline:
                    ending = f"stopped: the sweep's timeout of {record.timeout_seconds:g}s passed"
                while ending is None and c.running() < backend.capacity and c.finished() + len(c.active) < record.n_trials:
                    c.start_one()
                if not c.active and (ending is not None or c.finished() >= record.n_trials):
                    break
                c.poll(ending)
                if time.monotonic() - c.last_write >= HEARTBEAT_SECONDS:
                    c.save(f"running: {c.finished()}/{record.n_trials} trials finished, {len(c.active)} training")
                time.sleep(POLL_SECONDS)
        finally:
            for a in c.active:  # only on an unexpected error: leave no trial behind
                backend.stop(a.handle)
    record.status, record.finished_at = "done", rf.utc_now_iso()
    done = c.finished()
    record.message = (f"{done} of {record.n_trials} trials finished"
                      + (f" ({ending.removeprefix('stopped: ')}; continue with --resume {record.sweep_id})"
                         if ending else ""))
    c.save()
    return record

