"""The fix experiment as a job of the one trial pool (jobs.pool): which trial next, when to stop one.

Every verdict is taken over seeds (``record.seeds``: the parent's own first, then fresh ones), and
hopeless candidates stop early (successive halving in three rungs):

1. **screen**: every candidate on the parent's own seed, the seed the run failed on. Once
   :data:`PROMOTE` candidates have solved there, a trial past the env steps of the slowest of them
   cannot be promoted and is stopped.
2. **confirm**: a candidate that solved its screen trains on the fresh seeds at once; one that
   fails more seeds than ``required`` allows is out, its other trials stopped or skipped. Beside
   them, **baseline** trials train the parent's unchanged config on the fresh seeds (at least three):
   when it solves all of them (or most, and no change beats it), the verdict is "unlucky seed", not a fault.
3. **combine**: when every arm that qualifies works around the key the top finding blames (a longer
   budget for a narrow network) and a fix of that key solved some seeds, the two are tried together
   on every seed: the finding's fix, made robust, is the answer a person wants.
4. **extend**: when no arm qualifies, the best arm that changes a blamed key (any arm when none is
   blamed) and solved some seeds but ran out of budget on another is tried with the first of
   :data:`EXTEND_FACTORS` times its budget, on every seed (an exploration schedule keeps its length in env
   steps): a fix that is right but slower than the run's budget allows is still the answer, with the budget
   it needs. When no arm solved any seed, the arm of the best-ranked finding that says the reward was never (or too
   rarely) found (rules/exploration.py) gets the last factor at once: its change shows late by nature, and no seed's
   progress can say it is getting closer. When that longer arm still runs out of budget on a seed whose best evaluation it raised (the
   seed was getting there), the next factor is tried the same way; a seed the longer budget did not move
   (best evaluation no higher) gets no more budget. **explore**: then, once, the arm at its own budget with an
   entropy bonus, and the arm with twice the parallel envs (on-policy algorithms: changes.explore_arms), each on every
   seed: a seed that more budget did not move is one whose policy stopped looking (a sparse reward it never found), or
   random-walked on noisy updates before it found one, which more of the same will not fix. The same when the last
   factor still left a seed unsolved: the longest budget is spent, another way in is what is left.
5. **widen** (experiments.widen): nothing qualifies and an arm missed the required seeds by one: it and the
   unchanged config train on two more fresh seeds, 4 of 5 required, and such a winner must solve its holdout seeds.
6. **trim**: the best arm with more than one change is re-run without each change in turn (a budget raise
   together with the exploration_fraction set beside it: :func:`without`); a
   variant that still solves every seed replaces it (padding such as a budget raise falls away),
   until nothing more can be dropped. A blamed key is dropped only when the variant without it is
   no slower (median env steps to solve): a fix that makes solving faster is not padding; a budget raise
   always goes when the variant solves without it (the run's budget was enough). After the
   extend rung this is what tells a fix that needed more budget from a budget that alone suffices.

7. **recheck**: when the unchanged config solved every fresh seed while the winner solved every seed, the
   parent's own too, both train on as many more fresh seeds: a fault that fails one seed in three often
   solves three in a row, and "unlucky seed, no change is needed" must hold on the new seeds as well
   (experiments.verdict: the winner must also solve at least as many of them as the unchanged config).
8. **holdout**: the winner, once chosen, trains on ``record.holdout`` more fresh seeds that no rung chose on: it
   was picked for solving the seeds above, so they flatter it (a config that solves half the seeds passes three in
   a row one time in eight, and more often when several candidates race). What it solves there is reported with
   the verdict, never used to pick.

The winner is the smallest change set that solves on the required seeds and beats the unchanged
config there, a change of a key the top finding blames first when one qualifies (a budget raise
around a narrow network is the answer only when widening it does not solve); experiments.verdict
computes it and the message from the record's numbers.
"""

from __future__ import annotations

import os
import socket
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments import verdict as vd
from gymnasium_solver.experiments.changes import (
    EXTEND_FACTORS,
    explore_arms,
    exploring_arm,
    extended_name,
    longer_budget,
    record_parent,
    trial_overrides,
    without,
)
from gymnasium_solver.experiments.commands import train_command
from gymnasium_solver.experiments.parent import refusal
from gymnasium_solver.experiments.racing import Racing
from gymnasium_solver.experiments.record import BASELINE, ArmResult, ExperimentRecord, Trial, write_record
from gymnasium_solver.experiments.trial_end import finish, refresh, trial_line
from gymnasium_solver.experiments.widen import holds_after_widen, widen
from gymnasium_solver.jobs.backend import TrialBackend, TrialHandle, TrialSpec
from gymnasium_solver.jobs.pool import Ended, Start, TrialPool
from gymnasium_solver.launcher import override_pairs
from gymnasium_solver.run_store import RunStore

DEFAULT_TIMEOUT_SECONDS = 600.0
MAX_TIMEOUT_SECONDS = 6 * 3600.0
DEFAULT_SEEDS = 3
MAX_SEEDS = 10
DEFAULT_HOLDOUT = 3  # fresh seeds the winner trains on once chosen (the holdout rung)
TRIM_SLACK = 2.0  # a trim variant may need at most this many times its base's env steps on a seed
Progress = Callable[[str], None]


class FixJob(Racing):
    """The fix experiment's policy for the trial pool: keys are indices into ``record.trials``."""

    def __init__(self, store: RunStore, record: ExperimentRecord, pool: TrialPool, progress: Progress | None,
                 parent_env_steps: int):
        self.store, self.record, self.pool, self.progress = store, record, pool, progress
        self.parent_env_steps = parent_env_steps
        self.seeds = vd.seeds_of(record)
        self.queue: deque[int] = deque(i for i, t in enumerate(record.trials) if t.outcome == "pending")
        self.done = sum(1 for t in record.trials if t.outcome not in ("pending", "running"))
        self.out: set[str] = set()  # candidates that failed more seeds than `required` allows
        self.failed: dict[str, int] = {}  # seeds each candidate failed
        self.decided: set[int] = set()  # trials whose result its candidate has been judged on
        self.stopped: set[int] = set()  # trials the job stopped (a seed not solved, whatever its final eval says)
        self.withdrawn: set[int] = set()  # running trials stopped because their candidate was already out
        for i, t in enumerate(record.trials):  # a record that already holds results: judged when they came
            if t.role != "baseline" and t.outcome in ("solved", "not_solved", "stopped_early", "failed"):
                self.decided.add(i)
                if t.outcome != "solved":
                    self.failed[t.candidate] = self.failed.get(t.candidate, 0) + 1
        self.out |= self._out_of_race()
        self.trim_base: ArmResult | None = None  # the arm the current trim round drops changes from
        self.origin: ArmResult | None = None  # the arm the first trim round started from
        self.trim_done = False
        self.combined = any(t.role == "combine" for t in record.trials)
        self.extends = len({t.candidate for t in record.trials if t.role == "extend"})  # extend arms queued
        self.explored = any(t.role == "explore" for t in record.trials)
        self.rechecked = bool(record.recheck_seeds)
        self.ends = 0  # trials ended so far: the racing bar below is recomputed only when one has
        self._bars_at, self._bars = -1, list[ArmResult]()

    # -- the pool's questions --------------------------------------------------------------
    def next_start(self) -> Start | None:
        if not self.queue:
            self._plan_trim()
        if not self.queue:
            self._plan_widen()
        if not self.queue:
            self._plan_recheck()
        if not self.queue:
            self._plan_holdout()
        if not self.queue:
            return None
        i = self.queue.popleft()
        t = self.record.trials[i]
        applied = dict(t.changes) | ({"seed": t.seed} if t.seed is not None and t.seed != self.record.seed else {})
        spec = TrialSpec(self.record.config_id, trial_overrides(self.record, t), self.record.parent_run_id,
                         self.record.experiment_id, applied, use_zoo=self.record.use_zoo)
        return Start(i, spec)

    def started(self, key: Hashable, handle: TrialHandle) -> None:
        t = self.record.trials[int(str(key))]
        t.run_id, t.outcome = handle.run_id, "running"

    def start_failed(self, key: Hashable, error: str) -> None:
        t = self.record.trials[int(str(key))]
        t.outcome, t.detail = "failed", error
        self.ends += 1
        self._say(t)
        self._judge(int(str(key)), solved=False)

    def should_stop(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> str | None:
        t = self.record.trials[int(str(key))]
        refresh(t, info)
        if t.role in ("baseline", "recheck", "holdout"):
            return None
        if t.candidate in self.out:  # withdrawn, as a queued trial would be skipped: not a seed it failed
            self.withdrawn.add(int(str(key)))
            self.decided.add(int(str(key)))
            return f"stopped: {t.candidate} already failed a seed"
        if t.role == "trim":
            reason = self._slower_than_base(t)
        else:
            reason = self._beaten(t) or (self._cannot_be_promoted(t) if t.role == "screen" else None)
        if reason is not None:  # a seed it did not solve: judged now, before the slot it frees is refilled
            self.stopped.add(int(str(key)))
            self._judge(int(str(key)), solved=False)
        return reason

    def _slower_than_base(self, t: Trial) -> str | None:
        """A trim variant must do what its base does without the dropped change: one that needs more than
        TRIM_SLACK times the base's env steps on a seed has not shown the change was padding."""
        base = self.trim_base
        own = next((o for o in base.per_seed if o.seed == t.seed and o.solved), None) if base else None
        if own is None or t.solved_at_env_steps is not None or t.env_steps <= TRIM_SLACK * own.env_steps:
            return None
        return (f"stopped: past {TRIM_SLACK:g}x the env steps {base.name if base else ''} needed on seed {t.seed} "
                f"({own.env_steps:,}): the dropped change matters")

    def recorded(self, key: Hashable, handle: TrialHandle, info: rf.RunInfo) -> None:
        """Judge the candidate as soon as the run has recorded its end: the slot it frees must go to its
        confirm trials if it solved, and never to another seed of a candidate that this failure puts out."""
        t = self.record.trials[int(str(key))]
        refresh(t, info)
        self._judge(int(str(key)), solved=info.solved)

    def ended(self, end: Ended) -> None:
        t = self.record.trials[int(str(end.key))]
        refresh(t, end.info)
        finish(t, end.info, end.exit_code, end.stop_detail)
        self.ends += 1
        if int(str(end.key)) in self.stopped and t.outcome == "solved":
            # Its final evaluation after the stop reached the threshold: not what it was judged on.
            t.outcome, t.detail = "stopped_early", f"{end.stop_detail}; its final evaluation after the stop " \
                f"reached the threshold at {t.solved_at_env_steps} env steps (not counted)"
            t.solved_at_env_steps = None
        if int(str(end.key)) in self.withdrawn and t.outcome == "stopped_early":
            t.outcome = "skipped"  # no outcome of its seed (experiments.widen may train it there after all)
        self._say(t)
        self._judge(int(str(end.key)), solved=t.outcome == "solved")

    def skip_pending(self, why: str) -> None:
        while self.queue:
            t = self.record.trials[self.queue.popleft()]
            t.outcome, t.detail = "skipped", why
            self._say(t)

    def save(self) -> None:
        write_record(self.store.runs_dir, self.record)

    # -- rungs -----------------------------------------------------------------------------
    def _judge(self, i: int, solved: bool) -> None:
        """Once per trial (when its run records its end, or when it ended without recording one):
        promote its candidate to the fresh seeds, or count the seed against it."""
        t = self.record.trials[i]
        if i in self.decided or t.role in ("baseline", "recheck", "holdout"):
            return
        self.decided.add(i)
        if solved:
            if t.role == "screen" and len(self.seeds) > 1:
                new = [self._add(t.candidate, t.changes, s, "confirm") for s in self.seeds[1:]]
                self.queue.extendleft(reversed(new))  # decisive: before the rest of the screen
            return
        self.failed[t.candidate] = failures = self.failed.get(t.candidate, 0) + 1
        if failures > len(self.seeds) - self.record.required and t.candidate not in self.out:
            self.out.add(t.candidate)
            for j in [j for j in self.queue if self.record.trials[j].candidate == t.candidate]:
                self.queue.remove(j)
                x = self.record.trials[j]
                x.outcome, x.detail = "skipped", f"not started: {t.candidate} failed seed {t.seed}"
                self._say(x)

    def _add(self, name: str, changes: dict[str, Any], seed: int, role: str) -> int:
        self.record.trials.append(Trial(candidate=name, changes=changes, set_args=override_pairs(changes),
                                        seed=seed, role=role))  # type: ignore[arg-type]
        return len(self.record.trials) - 1

    def _idle(self) -> bool:
        """Has every trial ended (none pending or running)? The late rungs are planned only then."""
        return not any(t.outcome in ("pending", "running") for t in self.record.trials)

    def _busy(self) -> bool:
        return any(t.outcome in ("pending", "running") and t.role != "baseline" for t in self.record.trials)

    def _plan_trim(self) -> None:
        """When nothing but baselines is left: combine the blamed key's fix with a workaround when only
        workarounds qualify, then try the best arm without each of its changes, on every seed."""
        if self._busy() or self.trim_done or len(self.record.trials) >= MAX_TRIALS_IN_ALL:
            return
        baseline = vd.baseline_arm(self.record, self.parent_env_steps)
        arms = {vd._key(a.changes): a for a in vd.candidate_arms(self.record)}
        if self.trim_base is None:
            good = [a for a in arms.values() if vd.qualifies(self.record, a, baseline)]
            if not good:
                self._plan_extend(arms)
                return
            if self._plan_combine(good, arms):
                return
            self.trim_base = self.origin = min(vd.preferred(self.record, good), key=vd.rank)
        elif not self._next_trim_base(self.trim_base, arms, baseline):
            return
        while True:  # a round whose variants had all been tried as candidates goes straight to the next
            base = self.trim_base
            if len(base.changes) < 2:
                self.trim_done = True
                return
            for key in base.changes:
                changes = without(base.changes, key)
                if not changes or not self._trainable(changes):
                    continue  # nothing left, or refused by the trainer: the change is needed either way
                name = f"{base.name} without {' and '.join(k for k in base.changes if k not in changes)}"
                self.queue.extend(self._add(name, changes, s, "trim") for s in self._unjudged_seeds(changes))
            if self.queue or not self._next_trim_base(base, arms, baseline):
                return

    def _unjudged_seeds(self, changes: dict[str, Any]) -> list[int]:
        """The seeds the trim must still train ``changes`` on: every seed when it never ran; none when it
        failed a seed on its own (ran out of budget, crashed, or a trim stopped it as too slow); else the
        seeds where a race stopped it, or skipped it, before it could solve (a candidate stopped because
        another arm was faster has not shown that it fails)."""
        trials = [t for t in self.record.trials if t.role != "baseline" and vd._key(t.changes) == vd._key(changes)]
        if any(t.outcome in ("not_solved", "failed") or (t.outcome == "stopped_early" and t.role == "trim")
               for t in trials):
            return []
        solved = {vd.trial_seed(self.record, t) for t in trials if t.outcome == "solved"}
        return [s for s in self.seeds if s not in solved]

    def _next_trim_base(self, base: ArmResult, arms: dict[str, ArmResult], baseline: ArmResult) -> bool:
        """A round has ended: the best variant of the base that still qualifies (run as a trim or as a
        candidate of its own) replaces it. False, and the trim is done, when none does."""
        tried = {vd._key(without(base.changes, key)) for key in base.changes}
        variants = [a for a in arms.values() if vd._key(a.changes) in tried and a.changes
                    and vd.qualifies(self.record, a, baseline) and vd.drop_allowed(self.record, base, a)]
        if not variants:
            self.trim_done = True
            return False
        self.trim_base = min(variants, key=vd.rank)
        return True

    def _plan_combine(self, good: list[ArmResult], arms: dict[str, ArmResult]) -> bool:
        """Queue the combine rung (once): the best arm that changes a blamed key, with the best qualifying
        arm's changes added, on every seed, when no qualifying arm changes a blamed key. True if queued."""
        if self.combined or not self.record.blamed_keys:
            return False
        self.combined = True
        blamed = set(self.record.blamed_keys)
        if any(set(a.changes) & blamed for a in good):
            return False
        fixes = [a for a in arms.values() if set(a.changes) & blamed and a.solved > 0]
        if not fixes:
            return False
        fix, around = min(fixes, key=vd.rank), min(good, key=vd.rank)
        changes = {**fix.changes, **around.changes}
        if vd._key(changes) in arms or not self._trainable(changes):
            return False
        name = f"{fix.name} + {around.name}"
        self.queue.extend(self._add(name, changes, s, "combine") for s in self.seeds)
        return True

    def _plan_extend(self, arms: dict[str, ArmResult]) -> None:
        """Queue the extend rung: the best arm that solved some seeds and ran out of budget on another, a fix of a
        blamed key first, with EXTEND_FACTORS[0] times its budget, on every seed; once that arm has ended without
        qualifying, the same arm with the next factor, if the longer budget raised the best evaluation of a seed
        it still did not solve. Once every factor has been tried and the arm still failed a seed, the explore rung
        (at the arm's own budget): a seed that even the longest budget left unsolved needs another way in."""
        if self.extends >= len(EXTEND_FACTORS):
            extended = next((a for a in arms.values() if a.name == self.record.extended), None)
            if extended is not None:
                self._plan_explore(extended, arms)
            return
        factor = EXTEND_FACTORS[self.extends]
        if self.extends == 0:
            spent = {t.candidate for t in self.record.trials if t.outcome == "not_solved" and t.role != "baseline"}
            some = [a for a in arms.values() if 0 < a.solved and a.name in spent]
            arm = min(vd.preferred(self.record, some), key=vd.rank) if some else None
            if arm is None and not any(a.solved for a in arms.values()):
                arm = exploring_arm(self.record, list(arms.values()), spent)
                factor = EXTEND_FACTORS[-1]
                self.extends = len(EXTEND_FACTORS) - 1  # the longest budget at once: no seed to say it is getting closer
        else:
            arm = next((a for a in arms.values() if a.name == self.record.extended), None)
            longer = extended_name(self.record.extended or "", EXTEND_FACTORS[self.extends - 1])
            if arm is not None and not self._closer(arm.name, longer):
                self._plan_explore(arm, arms)
                arm = None
        changes = None if arm is None else longer_budget(self.record, arm.changes, factor)
        if arm is None or changes is None or vd._key(changes) in arms or not self._trainable(changes):
            self.extends = len(EXTEND_FACTORS)  # nothing to extend now means nothing later either
            return
        self.extends += 1
        self.record.extended = arm.name
        name = extended_name(arm.name, factor)
        self.queue.extend(self._add(name, changes, s, "extend") for s in self.seeds)

    def _plan_explore(self, arm: ArmResult, arms: dict[str, ArmResult]) -> None:
        """Queue the explore rung (once): ``arm`` solved some seeds, and a longer budget did not move a seed it had
        not solved, so more of the same will not either; the same arm with an entropy bonus, and with twice the
        samples per update (changes.explore_arms), each on every seed."""
        if self.explored:
            return
        self.explored = True
        for added, changes in explore_arms(self.record, arm.changes):
            if vd._key(changes) in arms or not self._trainable(changes):
                continue
            name = f"{arm.name} + {added}"
            self.queue.extend(self._add(name, changes, s, "explore") for s in self.seeds)

    def _closer(self, shorter: str, longer: str) -> bool:
        """Did arm ``longer`` (``shorter`` with more budget) run out of budget on a seed where its best evaluation
        is higher than ``shorter``'s there? Then more budget may finish that seed."""

        def best(name: str, outcome: str | None = None) -> dict[int | None, float]:
            return {t.seed: t.best_eval for t in self.record.trials if t.candidate == name and t.best_eval is not None
                    and (outcome is None or t.outcome == outcome)}
        before = best(shorter)
        return any(seed in before and value > before[seed] for seed, value in best(longer, "not_solved").items())

    def _trainable(self, changes: dict[str, Any]) -> bool:
        """Does the trainer accept the parent's config with ``changes``? (The same check the plan made.)"""
        return refusal(self.record.config_id, record_parent(self.record), changes, self.record.caps) is None

    def _say(self, t: Trial) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(trial_line(t, self.done, len(self.record.trials)))

    def _plan_widen(self) -> None:
        """Queue the widen rung (once, experiments.widen), when every trial has ended and no arm qualifies: the arms
        that missed the required seeds by one, and the unchanged config, on more fresh seeds; one more may fail."""
        if not self._idle():
            return
        planned = widen(self.record, self.parent_env_steps, MAX_TRIALS_IN_ALL)
        if planned:
            self.seeds = vd.seeds_of(self.record)
            self.out = self._out_of_race()  # one more failure is allowed now: a near miss is back in
            self.queue.extend(self._add(name, changes, s, role) for name, changes, s, role in planned)

    def _plan_recheck(self) -> None:
        """Queue the recheck (once), when every other trial has ended: the unchanged config solved every fresh
        seed, yet a change solved every seed, the parent's own too (verdict.needs_recheck); both train on as many
        more fresh seeds before the verdict."""
        if self.rechecked or not self._idle():
            return
        self.rechecked = True
        every_seed = vd.baseline_arm(self.record, self.parent_env_steps, every_seed=True)
        best = self._best()
        if not vd.needs_recheck(self.record, every_seed, best) or best is None:
            return
        if len(self.record.trials) + 2 * len(vd.baseline_seeds_of(self.record)) > MAX_TRIALS_IN_ALL:
            return
        extra = vd.recheck_seed_list(self.record)
        self.record.recheck_seeds = extra
        self.record.baseline_seeds = [*vd.baseline_seeds_of(self.record), *extra]
        for s in extra:
            self.queue.append(self._add(BASELINE, {}, s, "baseline"))
            self.queue.append(self._add(best.name, best.changes, s, "recheck"))

    def _plan_holdout(self) -> None:
        """Queue the holdout (once), when every other trial has ended: the arm the verdict will name, on
        record.holdout fresh seeds after every seed the experiment chose on."""
        r = self.record
        if r.holdout_seeds or not r.holdout or not self._idle():
            return
        best = self._best()
        every_seed = vd.baseline_arm(r, self.parent_env_steps, every_seed=True)
        if best is None or not vd.recheck_holds(r, best, every_seed) or len(r.trials) + r.holdout > MAX_TRIALS_IN_ALL:
            return
        r.holdout_seeds = vd.holdout_seed_list(r)
        self.queue.extend(self._add(best.name, best.changes, s, "holdout") for s in r.holdout_seeds)

    # -- the end ---------------------------------------------------------------------------
    def _best(self) -> ArmResult | None:
        """The arm the verdict names: the best qualifying arm (a fix of a blamed key first), or its verified trim."""
        r = self.record
        baseline = vd.baseline_arm(r, self.parent_env_steps)
        arms = vd.candidate_arms(r)
        qualifying = [a for a in arms if vd.qualifies(r, a, baseline)]
        return self._smallest(sorted(vd.preferred(r, qualifying), key=vd.rank), qualifying)

    def conclude(self, ending: str | None) -> None:
        r = self.record
        every_seed = vd.baseline_arm(r, self.parent_env_steps, every_seed=True)
        arms = vd.candidate_arms(r)
        best = self._best()
        if best is not None and not vd.recheck_holds(r, best, every_seed):
            best = None  # it solved fewer of the recheck seeds than the unchanged config: it does not beat it
        winner = None
        if best is not None:
            own = next(t for t in r.trials if t.run_id == next(o.run_id for o in best.per_seed if o.seed == r.seed))
            origin = self.origin if self.origin is not None and set(best.changes) < set(self.origin.changes) else None
            winner = vd.make_winner(r, best, origin, train_command(r.config_id, trial_overrides(r, own), r.use_zoo))
            held = vd.holdout_arm(r)
            winner.holdout = held if held is not None and vd._key(held.changes) == vd._key(best.changes) else None
            winner = winner if holds_after_widen(r, winner) else None
        r.arms = [every_seed, *arms] if len(self.seeds) > 1 else arms
        r.winner = winner
        r.verdict = vd.decide(r, winner, every_seed)
        r.message = vd.message(r, ending)

    def _smallest(self, good: list[ArmResult], qualifying: list[ArmResult]) -> ArmResult | None:
        """The best of the ``good`` arms, replaced by the smallest verified trim of it when there is one (of the
        ``qualifying`` arms: a trim that dropped a blamed key showed, on every seed, that it was not needed)."""
        if not good:
            return None
        if self.trim_base is None:
            return good[0]
        return next((a for a in qualifying if vd._key(a.changes) == vd._key(self.trim_base.changes)), good[0])


MAX_TRIALS_IN_ALL = 64  # screen + confirm + baseline + trim trials: a bound on what one experiment trains


def _parent_env_steps(store: RunStore, record: ExperimentRecord) -> int:
    try:
        return store.info(store.resolve(record.parent_run_id)).progress.env_steps
    except ValueError:
        return 0


def run_experiment(
    store: RunStore, record: ExperimentRecord, backend: TrialBackend, *, progress: Progress | None = None
) -> ExperimentRecord:
    """Run every pending trial of ``record`` (and the rungs they lead to) on ``backend``; return the
    finished record with its arms, verdict and winner.

    Blocks until all trials have ended or ``record.timeout_seconds`` has passed (then the running
    trials are stopped and the rest skipped). ``progress`` gets one line per finished trial.
    """
    record.pid, record.host, record.status = os.getpid(), socket.gethostname(), "running"
    record.parallel = backend.capacity
    pool = TrialPool(store, backend)
    job = FixJob(store, record, pool, progress, _parent_env_steps(store, record))
    ending = pool.run(job, record.timeout_seconds, "experiment")
    job.conclude(ending)
    record.status, record.finished_at = "done", rf.utc_now_iso()
    job.save()
    return record
