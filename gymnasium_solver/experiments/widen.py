"""The widen rung of the fix experiment (experiments.runner): when no arm solved the required seeds and an arm
missed them by one seed, that arm and the unchanged config train on more fresh seeds, and one more of them may fail.

A config that solves nine seeds in ten fails a 3-of-3 rule about a quarter of the time: heldout85 c01's revert
(PPO ``clip_range=0.2``, the right change) solved the parent's seed, failed the next and was out, and the verdict
was ``not_fixed``, though the user's config without the fault solves 9 of 10 seeds. 4 of 5 passes such a config
0.92 of the time (3 of 3: 0.73), and one that fails a seed in three 0.46 (3 of 3: 0.30). The widened arm had a second
chance, so a winner that failed a seed must also solve its holdout seeds (:func:`holds_after_widen`): then a config
that solves nine seeds in ten passes the whole rule about 0.83 of the time, and one that solves half about 0.13
(3 of 3 alone: 0.125)."""

from __future__ import annotations

from typing import Any

from gymnasium_solver.experiments import verdict as vd
from gymnasium_solver.experiments.record import BASELINE, ArmResult, ExperimentRecord, TrialRole, Winner

WIDEN_SEEDS = 2  # fresh seeds the rung adds: 3 of 3 becomes 4 of 5 (`gsolve fix --seeds 5 --require 4`)
WIDEN_ARMS = 1  # near misses widened: the best, a fix of a blamed key first (each more is one more lucky draw)


def near_misses(record: ExperimentRecord, arms: list[ArmResult]) -> list[ArmResult]:
    """The arms that failed exactly one seed more than ``record.required`` allows and solved at least one, best
    first: a fix of a blamed key before a change around it, then the fewest changes (each failed as many seeds; how
    many more it solved is how far the race let it run: heldout85 c01's revert of the blamed key alone, stopped after
    its one failure, is what the user's config lacked, where reverting every setting to the defaults solved one seed
    more before failing two), then vd.rank."""
    allowed = len(vd.seeds_of(record)) - record.required
    close = [a for a in arms if a.name != BASELINE and a.solved and a.ran - a.solved == allowed + 1]
    return sorted(vd.preferred(record, close), key=lambda a: (len(a.changes), vd.rank(a)))[:WIDEN_ARMS]


def widen_seed_list(record: ExperimentRecord, n: int = WIDEN_SEEDS) -> list[int]:
    """``n`` seeds after the experiment's own: the unchanged config's fresh seeds first (it has trained there
    already, as the comparison needs), then seeds nothing has used."""
    own = set(vd.seeds_of(record))
    spare = [s for s in vd.baseline_seeds_of(record) if s not in own][:n]
    return spare + vd.unused_seeds(record, n - len(spare))


def widen(record: ExperimentRecord, parent_env_steps: int, max_trials: int) -> list[tuple[str, dict[str, Any], int,
                                                                                  TrialRole]]:
    """Once, when no arm qualifies and an arm missed by a seed: add WIDEN_SEEDS fresh seeds to ``record.seeds`` and
    one fewer to ``record.required``, and return the trials to queue (name, changes, seed, role): the unchanged
    config on the new seeds it has not trained on (``record.baseline_seeds`` grows by them), and each near miss on
    every seed it has no outcome on (the new ones, and any the race skipped). Nothing (and the record as it was) when
    the rung has run, no arm is a near miss, or the trials would pass ``max_trials``."""
    if record.widened_seeds or len(vd.seeds_of(record)) < 2:
        return []
    baseline = vd.baseline_arm(record, parent_env_steps)
    arms = vd.candidate_arms(record)
    close = [] if any(vd.qualifies(record, a, baseline) for a in arms) else near_misses(record, arms)
    if not close:
        return []
    extra = widen_seed_list(record)
    seeds = [*vd.seeds_of(record), *extra]
    plan: list[tuple[str, dict[str, Any], int, TrialRole]] = [
        (BASELINE, {}, s, "baseline") for s in extra if s not in vd.baseline_seeds_of(record)]
    plan += [(a.name, a.changes, s, "widen") for a in close for s in seeds if s not in {o.seed for o in a.per_seed}]
    if len(record.trials) + len(plan) > max_trials:
        return []
    record.baseline_seeds = [*vd.baseline_seeds_of(record), *(s for _, _, s, role in plan if role == "baseline")]
    record.widened_seeds, record.seeds, record.required = extra, seeds, record.required + len(extra) - 1
    return plan


def holds_after_widen(record: ExperimentRecord, winner: Winner) -> bool:
    """A winner that failed a seed and qualified only once the widen rung gave it more seeds had a second chance, and
    a config that solves half the seeds gets through 4 of 5 one time in five: it is the fix only if it also solves
    every holdout seed it finished (heldout85 c01, in-sample: a widened winner solving 4 of 5 solved 1 of 3 seeds
    nothing chose it on). Every other winner: True (its holdout is reported, never chosen on)."""
    held = winner.holdout
    return not record.widened_seeds or winner.seeds_solved == winner.seeds or held is None or held.solved == held.ran
