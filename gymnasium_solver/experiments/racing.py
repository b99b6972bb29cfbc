"""Racing in the fix experiment (experiments.runner): which running trial cannot win any more and is stopped, so
its slot goes to a trial that can."""

from __future__ import annotations

from typing import Any

from gymnasium_solver.experiments import verdict as vd
from gymnasium_solver.experiments.record import ArmResult, ExperimentRecord, Trial

PROMOTE = 3  # candidates that go on from the screen rung to the fresh seeds (more only if faster)


class Racing:
    """The stopping rules of FixJob: a screen trial that cannot be promoted, and a trial slower than an arm that
    already solved every seed."""

    record: ExperimentRecord
    seeds: list[int]
    out: set[str]
    failed: dict[str, int]
    ends: int
    parent_env_steps: int
    _bars_at: int
    _bars: list[ArmResult]

    def _out_of_race(self) -> set[str]:
        """The candidates that failed more seeds than ``required`` of the experiment's seeds allows."""
        allowed = len(self.seeds) - self.record.required
        return {c for c, n in self.failed.items() if n > allowed}

    def _cannot_be_promoted(self, t: Trial) -> str | None:
        """A screen trial past the env steps of the PROMOTE-th fastest solved screen trial (the fastest,
        with one seed: the old 'cannot beat' rule) cannot go on to the fresh seeds. Candidates that have
        since failed a fresh seed are out of the race and hold no place among those PROMOTE."""
        solved = sorted((s.solved_at_env_steps, s.candidate) for s in self.record.trials if s.role == "screen"
                        and s is not t and s.solved_at_env_steps is not None and s.candidate not in self.out
                        and self._rival(t.changes, s.changes))
        k = PROMOTE if len(self.seeds) > 1 else 1
        if t.solved_at_env_steps is not None or len(solved) < k or t.env_steps <= solved[k - 1][0]:
            return None
        steps, name = solved[k - 1]
        return f"stopped: cannot beat {name} (solved at {steps})"

    def _beaten(self, t: Trial) -> str | None:
        """Racing: once an arm has solved every seed, a screen or confirm trial of another arm that is past
        that arm's slowest seed is stopped (trim and combine trials are exempt: they test what can be
        dropped, and what the blamed key's fix needs)."""
        if t.role in ("trim", "combine") or t.solved_at_env_steps is not None:
            return None
        best = self._racing_bar(t)
        if best is not None and best.max_env_steps is not None and t.env_steps > best.max_env_steps:
            return f"stopped: cannot beat {best.name} (solved every seed within {best.max_env_steps:,} env steps)"
        return None

    def _rival(self, changes: dict[str, Any], other: dict[str, Any]) -> bool:
        """May ``other`` race a trial of ``changes`` out? A fix of a blamed key wins over any change around it
        (verdict.preferred), so only another fix of a blamed key can beat it."""
        blamed = set(self.record.blamed_keys)
        return not set(changes) & blamed or bool(set(other) & blamed)

    def _racing_bar(self, t: Trial) -> ArmResult | None:
        """The qualifying arm with the fastest slowest seed that may race ``t`` out (not its own): the
        qualifying arms are computed once per trial that ends, not on every poll of every running trial."""
        if self._bars_at != self.ends:
            baseline = vd.baseline_arm(self.record, self.parent_env_steps)
            done = sorted((a for a in vd.candidate_arms(self.record) if vd.qualifies(self.record, a, baseline)
                           and a.max_env_steps is not None), key=lambda a: a.max_env_steps or 0)
            self._bars_at, self._bars = self.ends, done
        return next((a for a in self._bars if a.name != t.candidate and self._rival(t.changes, a.changes)), None)
