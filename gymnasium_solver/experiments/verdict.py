"""A fix experiment's verdict over seeds, from its trials (pure functions over the record).

An arm is a change set (a candidate, a trimmed winner, or the parent's unchanged config); its
outcome is per seed. The verdict needs all three of:

- **fixed**: an arm solves on ``record.required`` of the seeds and beats the parent's unchanged
  config on the same seeds (more seeds solved; or as many, in fewer env steps);
- **unlucky_seed**: the unchanged config solves on every one of its fresh seeds (``record.baseline_seeds``,
  at least three), or on most of them when no change beats it: the parent's seed was bad luck. A config
  that fails some fresh seeds too, where a change solves every seed, is ``fixed``: telling its user "no
  change is needed" would leave them a config that fails one seed in several. When it solved every fresh
  seed while a change solved every seed, the parent's own too, both first train on as many more fresh seeds
  (``record.recheck_seeds``): "unlucky" must hold there too, and the change must solve at least as many of them;
- **not_fixed**: neither.

Every number the message states is read from the arms it reports.
"""

from __future__ import annotations

import re
import shlex
import statistics
from typing import Any

from gymnasium_solver import launcher
from gymnasium_solver.experiments.candidates import YOURS
from gymnasium_solver.experiments.record import (
    BASELINE,
    ArmResult,
    ExperimentRecord,
    SeedOutcome,
    Trial,
    Verdict,
    Winner,
)


def seeds_of(record: ExperimentRecord) -> list[int]:
    """The experiment's seeds (a record from before seeds: the parent's own only)."""
    return record.seeds or [record.seed]


def baseline_seeds_of(record: ExperimentRecord) -> list[int]:
    """The fresh seeds the unchanged config trains on (a record from before they were its own: seeds[1:])."""
    return record.baseline_seeds or seeds_of(record)[1:]


def trial_seed(record: ExperimentRecord, trial: Trial) -> int:
    return record.seed if trial.seed is None else trial.seed


def arm_result(record: ExperimentRecord, name: str, changes: dict[str, Any], trials: list[Trial],
               seeds: list[int] | None = None) -> ArmResult:
    """The arm's finished trials on ``seeds`` (default: the experiment's), in that order."""
    by_seed: dict[int, SeedOutcome] = {}
    for t in trials:
        if t.outcome in ("pending", "running", "skipped"):
            continue
        solved = t.outcome == "solved" and t.solved_at_env_steps is not None
        steps = t.solved_at_env_steps if solved and t.solved_at_env_steps is not None else t.env_steps
        by_seed[trial_seed(record, t)] = SeedOutcome(seed=trial_seed(record, t), solved=solved, env_steps=steps,
                                                     run_id=t.run_id)
    per_seed = [by_seed[s] for s in (seeds_of(record) if seeds is None else seeds) if s in by_seed]
    solved_steps = [o.env_steps for o in per_seed if o.solved]
    return ArmResult(name=name, changes=changes, set_args=launcher.override_pairs(changes), per_seed=per_seed,
                     solved=len(solved_steps), ran=len(per_seed),
                     median_env_steps=float(statistics.median(solved_steps)) if solved_steps else None,
                     max_env_steps=max(solved_steps) if solved_steps else None)


def baseline_arm(record: ExperimentRecord, parent_env_steps: int, *, every_seed: bool = False) -> ArmResult:
    """The parent's unchanged config: the parent run on its own seed (unsolved), its baseline trials on the
    experiment's other seeds (what a candidate must beat there), or with ``every_seed`` on all its fresh
    seeds (what 'unlucky seed' is judged on and the record reports)."""
    seeds = [record.seed, *baseline_seeds_of(record)] if every_seed else seeds_of(record)
    trials = [t for t in record.trials if t.role == "baseline"]
    own = Trial(candidate=BASELINE, changes={}, set_args=[], seed=record.seed, role="baseline",
                run_id=record.parent_run_id, outcome="not_solved", env_steps=parent_env_steps)
    return arm_result(record, BASELINE, {}, [own, *(t for t in trials if trial_seed(record, t) != record.seed)],
                      seeds)


def candidate_arms(record: ExperimentRecord) -> list[ArmResult]:
    """One arm per distinct change set tried (candidates and trimmed variants), in the order first tried."""
    groups: dict[str, tuple[str, dict[str, Any], list[Trial]]] = {}
    for t in record.trials:
        if t.role == "baseline":
            continue
        key = _key(t.changes)
        if key not in groups:
            groups[key] = (t.candidate, dict(t.changes), [])
        groups[key][2].append(t)
    return [arm_result(record, name, changes, trials) for name, changes, trials in groups.values()]


def _key(changes: dict[str, Any]) -> str:
    return " ".join(sorted(launcher.override_pairs(changes)))


def arm_with(record: ExperimentRecord, changes: dict[str, Any]) -> ArmResult | None:
    """The concluded arm (``record.arms``) of the change set ``changes``, if any."""
    return next((a for a in record.arms if _key(a.changes) == _key(changes)), None)


def rank(arm: ArmResult) -> tuple[int, float, int]:
    """Better first: more seeds solved, then fewer median env steps to solve, then fewer changes."""
    return (-arm.solved, arm.median_env_steps if arm.median_env_steps is not None else float("inf"),
            len(arm.changes))


def beats(arm: ArmResult, baseline: ArmResult) -> bool:
    """More seeds solved than the unchanged config; or as many, in fewer median env steps."""
    if arm.solved != baseline.solved:
        return arm.solved > baseline.solved
    return (arm.median_env_steps is not None and baseline.median_env_steps is not None
            and arm.median_env_steps < baseline.median_env_steps)


def preferred(record: ExperimentRecord, arms: list[ArmResult]) -> list[ArmResult]:
    """Of the qualifying ``arms``, those that change a key the top finding blames, when any does: a fix of
    the named cause that solves every seed is the answer; a change around it (a longer budget over a
    narrow network) is reported only when no such fix works."""
    addressing = [a for a in arms if set(a.changes) & set(record.blamed_keys)]
    return addressing or arms


BUDGET_KEYS = frozenset({"max_env_steps", "exploration_fraction"})  # what the trim drops with a budget raise


def drop_allowed(record: ExperimentRecord, base: ArmResult, variant: ArmResult) -> bool:
    """May the trim replace ``base`` with ``variant`` (``base`` less one change)? Padding may always go; a
    change of a key the top finding blames only when solving is no slower without it (median env steps). A
    budget raise (with the exploration_fraction shortened beside it) may always go: the variant solved every
    seed within the run's own budget, so the budget was not what the run lacked, and "faster" with a longer
    budget is mostly the evaluation grid (eval_freq follows the budget) and schedules stretched over it."""
    dropped = set(base.changes) - set(variant.changes)
    if not dropped & set(record.blamed_keys) or dropped <= BUDGET_KEYS:
        return True
    return (variant.median_env_steps is not None and base.median_env_steps is not None
            and variant.median_env_steps <= base.median_env_steps)


def qualifies(record: ExperimentRecord, arm: ArmResult, baseline: ArmResult) -> bool:
    return arm.solved >= record.required and arm.ran == len(seeds_of(record)) and beats(arm, baseline)


def unlucky_rule(fresh_solved: list[bool], n_fresh: int, has_winner: bool) -> bool:
    """The rule on the unchanged config's outcomes on its ``n_fresh`` fresh seeds (every one finished): it
    solves all of them; or most of them, and no change beats it (``has_winner`` false). bench/ re-applies it
    to recorded rows, so it takes plain values."""
    if n_fresh == 0 or len(fresh_solved) != n_fresh:
        return False
    solved = sum(fresh_solved)
    return solved == n_fresh or (solved * 2 > n_fresh and not has_winner)


def unlucky(record: ExperimentRecord, baseline: ArmResult, winner: Winner | None = None) -> bool:
    """The unchanged config (``baseline_arm(every_seed=True)``) solves on every one of its fresh seeds ("your
    config solves 3 of 3 other seeds; seed 0 was unlucky"), or on most of them when there is no ``winner``. A
    recheck seed the timeout left unfinished is not counted (the first fresh seeds always are)."""
    done = {o.seed for o in baseline.per_seed}
    seeds = [s for s in baseline_seeds_of(record) if s not in record.recheck_seeds or s in done]
    fresh = [o.solved for o in baseline.per_seed if o.seed in seeds]
    return unlucky_rule(fresh, len(seeds), winner is not None)


def needs_recheck(record: ExperimentRecord, baseline: ArmResult, best: ArmResult | None) -> bool:
    """Before 'unlucky seed' is said of a config that solved every fresh seed (``baseline``, every seed's arm)
    while a change solved every seed, the parent's own too (``best``): the two differ on the parent's seed alone,
    and a fault that fails one seed in three often solves three in a row, so both train on as many more fresh
    seeds (once)."""
    if best is None or record.recheck_seeds or len(seeds_of(record)) < 2 or best.solved < len(seeds_of(record)):
        return False  # (a winner of --require k < n that failed a seed is not "every seed")
    fresh = [o.solved for o in baseline.per_seed if o.seed != record.seed]
    return len(fresh) == len(baseline_seeds_of(record)) and all(fresh)


def unused_seeds(record: ExperimentRecord, n: int) -> list[int]:
    """``n`` seeds after every seed the experiment has used (its own, the baseline's, the recheck's)."""
    top = max([*seeds_of(record), *baseline_seeds_of(record)])
    return list(range(top + 1, top + 1 + n))


def recheck_seed_list(record: ExperimentRecord) -> list[int]:
    """As many seeds as the unchanged config's fresh ones, after every seed the experiment has used."""
    return unused_seeds(record, len(baseline_seeds_of(record)))


def holdout_seed_list(record: ExperimentRecord) -> list[int]:
    """``record.holdout`` seeds after every seed the experiment chose on."""
    return unused_seeds(record, record.holdout)


def holdout_arm(record: ExperimentRecord) -> ArmResult | None:
    """The winner on the holdout seeds, those that finished (None when the rung did not run or none finished). No
    rule stops a holdout trial, so one stopped early was stopped by the timeout or a signal: unfinished, not
    counted."""
    trials = [t for t in record.trials if t.role == "holdout" and t.outcome != "stopped_early"]
    arm = arm_result(record, trials[0].candidate, dict(trials[0].changes), trials,
                     record.holdout_seeds) if trials else None
    return arm if arm is not None and arm.ran else None


def _holdout_text(record: ExperimentRecord) -> str:
    """What the winner did on seeds it was not chosen on ('' when it did not train on any)."""
    w = record.winner
    if w is None or w.holdout is None:
        return ""
    h = w.holdout
    said = f"On {h.ran} fresh seed{'s' if h.ran > 1 else ''} it was not chosen on, it solved {h.solved} ({_seeds_text(h)})"
    if h.solved == h.ran:
        return said + "."
    budget = w.changes.get("max_env_steps", record.parent_overrides.get("max_env_steps"))
    within = f" within max_env_steps={budget:,}" if isinstance(budget, int) else " within the run's budget"
    first = max(record.holdout_seeds) + 1
    more = re.sub(r"--set seed=-?\d+", f"--seeds {first}-{first + 9}", w.command)
    if more == w.command:
        more += f" --seeds {first}-{first + 9}"
    what = ("the change is what the run lacked, but the config" if record.verdict == "fixed" else "this option")
    return (f"{said}: {what} does not solve every seed{within}, so expect some of your seeds to fail too. Judge it "
            f"on more seeds before relying on it ({more}), or give it a longer budget.")


def recheck_arm(record: ExperimentRecord) -> ArmResult | None:
    """The change the recheck trained, on the recheck seeds (None when there was no recheck)."""
    trials = [t for t in record.trials if t.role == "recheck"]
    if not trials:
        return None
    return arm_result(record, trials[0].candidate, dict(trials[0].changes), trials, record.recheck_seeds)


def recheck_holds(record: ExperimentRecord, best: ArmResult, baseline: ArmResult) -> bool:
    """Does ``best`` solve at least as many of the recheck seeds as the unchanged config, on those both finished?
    (True with no recheck, or none of its trials finished: it said nothing.)"""
    mine = recheck_arm(record)
    if mine is None or _key(mine.changes) != _key(best.changes):
        return True
    theirs = {o.seed: o.solved for o in baseline.per_seed if o.seed in record.recheck_seeds}
    both = [o for o in mine.per_seed if o.seed in theirs]
    return sum(o.solved for o in both) >= sum(theirs[o.seed] for o in both)


def make_winner(record: ExperimentRecord, arm: ArmResult, origin: ArmResult | None, command: str) -> Winner:
    own = next(o for o in arm.per_seed if o.seed == record.seed)
    trial = next(t for t in record.trials if t.run_id == own.run_id)
    dropped = [k for k in (origin.changes if origin else {}) if k not in arm.changes]
    return Winner(candidate=arm.name, run_id=own.run_id or "", solved_at_env_steps=own.env_steps,
                  seconds=trial.seconds, changes=arm.changes, set_args=arm.set_args, command=command,
                  seeds_solved=arm.solved, seeds=arm.ran, median_env_steps=arm.median_env_steps,
                  max_env_steps=arm.max_env_steps, dropped=dropped,
                  # A blamed key the trim dropped was tested and found unneeded: that is said with `dropped`.
                  keeps_blamed=[k for k in record.blamed_keys if k not in arm.changes and k not in dropped])


def decide(record: ExperimentRecord, winner: Winner | None, baseline: ArmResult) -> Verdict:
    if unlucky(record, baseline, winner):
        return "unlucky_seed"
    return "fixed" if winner is not None else "not_fixed"


def of_seeds(k: int, n: int, other: bool = False) -> str:
    """'2 of 3 seeds', '0 of 1 seed' ('other seeds' with ``other``)."""
    return f"{k} of {n} {'other ' if other else ''}seed{'' if n == 1 else 's'}"


def _seeds_text(arm: ArmResult, outcomes: list[SeedOutcome] | None = None) -> str:
    return ", ".join(f"seed {o.seed}: {o.env_steps:,}" + ("" if o.solved else " (not solved)")
                     for o in (arm.per_seed if outcomes is None else outcomes))


def _recheck_text(record: ExperimentRecord, baseline: ArmResult | None) -> str:
    """How the unchanged config and the change did on the recheck seeds ('' with no recheck)."""
    again = recheck_arm(record)
    if again is None or baseline is None:
        return ""
    base = [o for o in baseline.per_seed if o.seed in record.recheck_seeds]
    first = len(baseline_seeds_of(record)) - len(record.recheck_seeds)
    return (f"Your unchanged config solved all {first} of its first fresh seeds while {' '.join(again.set_args)} "
            f"solved every seed, so both trained on {len(record.recheck_seeds)} more: your config solved "
            f"{sum(o.solved for o in base)} of {len(base)} ({_seeds_text(baseline, base)}), the change "
            f"{again.solved} of {again.ran} ({_seeds_text(again)}).")


def _winner_parts(record: ExperimentRecord, w: Winner) -> list[str]:
    """The winner's sentences: its change and spread, where it failed, the holdout, the budget, the trim."""
    parts: list[str] = []
    spread = (f"median {w.median_env_steps:,.0f}, slowest {w.max_env_steps:,}" if w.median_env_steps is not None
              and w.max_env_steps is not None else "")
    lead = "A more robust option" if record.verdict == "unlucky_seed" else "Fix"
    parts.append(f"{lead}: {' '.join(w.set_args)} solves {of_seeds(w.seeds_solved, w.seeds)} ({spread} env "
                 f"steps to solve).")
    arm = arm_with(record, w.changes)
    if arm is not None and arm.solved < arm.ran:
        missed = [o for o in arm.per_seed if not o.solved]
        parts.append(f"It did not solve {_seeds_text(arm, missed)} within its budget: not a config that solves "
                     "every seed.")
    parts.append(_holdout_text(record))
    base = next((a for a in record.arms if a.name == record.extended), None)
    if base is not None and w.changes.get("max_env_steps") not in (None, base.changes.get("max_env_steps")):
        parts.append(f"It needs the longer budget: {' '.join(base.set_args) or 'the change'} alone solved "
                     f"{of_seeds(base.solved, base.ran)} within the run's budget ({_seeds_text(base)}).")
    if w.dropped:
        which = "every seed" if w.seeds_solved == w.seeds else "the required seeds"  # a 4-of-5 winner after widen
        parts.append(f"Dropped as unnecessary (it still solves {which} without them): {', '.join(w.dropped)}.")
        unneeded = [k for k in w.dropped if k in record.blamed_keys]
        if unneeded:
            parts.append(f"So the top finding's change to {', '.join(unneeded)} was not needed.")
    if w.keeps_blamed:
        parts.append(f"Note: it keeps {', '.join(w.keeps_blamed)}, which the top finding blames: the finding may "
                     f"be wrong, or this works around it.")
    return parts


def _widened_but_not_held(record: ExperimentRecord) -> str:
    """With no winner: the arm that qualified only after the widen rung and failed a holdout seed ('' otherwise)."""
    held = holdout_arm(record) if record.widened_seeds and record.winner is None else None
    arm = arm_with(record, held.changes) if held is not None else None
    if held is None or arm is None:
        return ""
    return (f"{' '.join(arm.set_args)} solved {of_seeds(arm.solved, arm.ran)} ({_seeds_text(arm)}), but only "
            f"{held.solved} of the {held.ran} fresh seeds it was not chosen on ({_seeds_text(held)}): it passed only "
            "once the widen rung gave it more seeds, so it must hold on those too, and it is not counted as a fix.")


def _widen_text(record: ExperimentRecord) -> str:
    """What the widen rung did ('' when it did not run): which arms missed by a seed, the seeds added, the new rule."""
    extra = record.widened_seeds
    if not extra:
        return ""
    names = list(dict.fromkeys(" ".join(t.set_args) for t in record.trials if t.role == "widen"))
    n = len(seeds_of(record))
    return (f"No change solved {record.required - len(extra) + 1} of the first {n - len(extra)} seeds, and "
            f"{' and '.join(names)} missed by one, so {'they' if len(names) > 1 else 'it'} and your unchanged config "
            f"trained on {len(extra)} more fresh seeds ({', '.join(map(str, extra))}), where a change had to solve "
            f"{record.required} of {n}.")


def message(record: ExperimentRecord, ending: str | None) -> str:
    """One paragraph: the verdict, with the numbers it rests on (all read from record.arms / winner)."""
    n = len(seeds_of(record))
    baseline = next((a for a in record.arms if a.name == BASELINE), None)
    w = record.winner
    head = f"{sum(1 for t in record.trials if t.outcome == 'solved')} of {len(record.trials)} trials solved"
    if ending is not None:
        head += f" ({ending.removeprefix('stopped: ')})"
    parts = [head + "."]
    if record.refused:
        parts.append(f"Not tried, the trainer refuses its config: {'; '.join(record.refused)}.")
    if record.verdict == "unlucky_seed" and baseline is not None:
        others = baseline.per_seed[1:]
        k = sum(o.solved for o in others)
        if k == len(others):
            parts.append(f"Bad luck, not a bad config: your unchanged config solves "
                         f"{of_seeds(k, len(others), other=True)} ({_seeds_text(baseline)}); seed {record.seed} was "
                         "unlucky, so no change is needed.")
        else:
            parts.append(f"Mostly bad luck: your unchanged config solves {of_seeds(k, len(others), other=True)} "
                         f"({_seeds_text(baseline)}), and no change tried beats it; seed {record.seed} was unlucky. "
                         "For a config that solves every seed, search with several seeds per trial (gsolve sweep "
                         "--seeds-per-trial, docs/sweeps.md).")
    elif baseline is not None and n > 1:
        parts.append(f"Your unchanged config solves {of_seeds(baseline.solved, baseline.ran)} ({_seeds_text(baseline)}).")
    parts.append(_widen_text(record))
    parts.append(_recheck_text(record, baseline))
    mine = next((a for a in record.arms if a.name == YOURS), None)
    if mine is not None and (w is None or w.candidate != YOURS):
        parts.append(f"Your change, {' '.join(mine.set_args)}, solved {of_seeds(mine.solved, mine.ran)} "
                     f"({_seeds_text(mine)}).")
    if w is not None:
        parts += _winner_parts(record, w)
    elif record.verdict != "unlucky_seed":
        from gymnasium_solver.config.env_modules import env_flags

        flags = "".join(f" {shlex.quote(f)}" for f in env_flags(record.config_id))  # a user's class needs its flag
        need = of_seeds(record.required, n) if n > 1 else "its seed"
        parts.append(f"No candidate fixed run {record.parent_run_id} on {need} within its budget.")
        parts.append(_widened_but_not_held(record))
        if (close := closest(record, baseline)) is not None:
            arm, theirs = close
            more = "--seeds 10 --require 8" if record.widened_seeds else "--seeds 5 --require 4"
            parts.append(f"Closest: {' '.join(arm.set_args)} solved {of_seeds(arm.solved, arm.ran)} "
                         f"({_seeds_text(arm)}), where your unchanged config solved {theirs} of those {arm.ran}: it "
                         f"helps, but not on every seed. To judge it on more seeds: gsolve fix "
                         f"{record.parent_run_id} {more}{flags}.")
        why = (ending or "").removeprefix("stopped: ")
        cut = [t for t in record.trials if "timeout" in why and why in t.detail]
        if cut:  # the timeout, not the budget, ended these: say how long to give them
            longest = max((t.seconds or 0.0 for t in record.trials), default=0.0)
            parts.append(f"The timeout stopped or skipped {len(cut)} trial{'s' if len(cut) > 1 else ''} before they "
                         f"could finish (the longest trial ran {longest:,.0f} s); to let them finish: gsolve fix "
                         f"{record.parent_run_id} --timeout {2 * record.timeout_seconds:g}{flags}.")
        parts.append(f"Diagnose the trials (gsolve diagnose RUN_ID) for the next step, or try your own change: "
                     f"gsolve retry {record.parent_run_id} --set key=value{flags}")
    return " ".join(p for p in parts if p)


def closest(record: ExperimentRecord, baseline: ArmResult | None) -> tuple[ArmResult, int] | None:
    """With no winner: the best-ranked arm that solved more of the seeds it ran than the unchanged config solved
    of the same seeds, and that count of the unchanged config's; None when no arm did."""
    if baseline is None:
        return None
    solved_by_baseline = {o.seed: o.solved for o in baseline.per_seed}
    better = []
    for arm in record.arms:
        if arm.name == BASELINE or not arm.solved or any(o.seed not in solved_by_baseline for o in arm.per_seed):
            continue
        theirs = sum(solved_by_baseline[o.seed] for o in arm.per_seed)
        if arm.solved > theirs:
            better.append((arm, theirs))
    return min(better, key=lambda pair: rank(pair[0])) if better else None
