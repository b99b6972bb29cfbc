"""Candidate fixes for one run, read off its diagnosis: which config changes an experiment tries.

Pure: :func:`build_candidates` takes a :class:`Diagnosis` and the parent's overrides and returns
the candidates in the order they are worth trying. It reads only ``Diagnosis.findings``
(severity, ``suggested_changes``), ``Diagnosis.references.deviations`` and ``.unranked`` (``key``, ``value``,
``preset``, ``revert``), so new rules and new kinds of deviation become candidates unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from gymnasium_solver.diagnostics.models import Deviation, Diagnosis, Severity, SuggestedChange
from gymnasium_solver.launcher import override_pairs, yaml_value

DEFAULT_MAX_TRIALS = 8
MAX_TRIALS_LIMIT = 16  # each trial is a full training run; more is a sweep, not a fix
# Trials keep the parent's seed: a fix that only works on another seed is not a fix.
_NEVER_CHANGED = frozenset({"seed"})
_BUDGET_KEY = "max_env_steps"


class NoCandidatesError(ValueError):
    """The diagnosis suggests nothing to try; the message says what to do instead."""


class Candidate(BaseModel):
    """One config change set to try in a trial run of the parent's config."""

    name: str = Field(description="short label, e.g. 'finding approx_kl_low' or 'revert learning_rate'")
    changes: dict[str, Any] = Field(description="top-level config keys -> values, applied over the parent's overrides")
    set_args: list[str] = Field(description="the changes as `--set KEY=VALUE` arguments")
    source: Literal["finding", "revert", "revert_all", "yours"] = Field(description="yours: the change you gave (--set / fix_run's changes), judged beside the rest")
    why: str = Field(description="where the change comes from: the finding's title or the preset deviation")
    finding: str | None = Field(default=None, description="the id of the finding whose change it is (source finding)")


YOURS = "your change"


def yours_first(own: Mapping[str, Any], candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` with your own change set first (as ``YOURS``), and without a candidate that makes the same
    changes (it is yours then, judged once)."""
    mine = Candidate(name=YOURS, changes=dict(own), set_args=override_pairs(dict(own)), source="yours",
                     why="your change, judged on the same seeds beside the diagnosis' candidates")
    return [mine, *(c for c in candidates if _canonical(c.changes) != _canonical(own))]


def _canonical(changes: Mapping[str, Any]) -> str:
    return json.dumps(changes, sort_keys=True, default=str)


def _is_noop(changes: Mapping[str, Any], parent_overrides: Mapping[str, Any]) -> bool:
    return all(k in parent_overrides and _canonical({k: parent_overrides[k]}) == _canonical({k: v})
               for k, v in changes.items())


def _from_changes(changes: Iterable[SuggestedChange]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in changes:
        if c.key not in _NEVER_CHANGED and c.key not in out:
            out[c.key] = c.suggested
    return out


def _finding_candidates(diagnosis: Diagnosis) -> list[Candidate]:
    """The top finding's changes together (as `gsolve retry` applies them), then each other
    warning/critical finding's changes, in ranking order."""
    out: list[Candidate] = []
    for f in diagnosis.findings:
        if f.severity == Severity.INFO or not f.suggested_changes:
            continue
        changes = _from_changes(f.suggested_changes)
        if changes:
            out.append(Candidate(name=f"finding {f.id}", changes=changes, set_args=override_pairs(changes),
                                 source="finding", why=f"[{f.severity}] {f.title}", finding=f.id))
    return out


def _lowers_budget(key: str, value: Any, preset: Any) -> bool:
    return key == _BUDGET_KEY and isinstance(value, int | float) and isinstance(preset, int | float) and preset < value


def _revert_candidates(diagnosis: Diagnosis) -> list[Candidate]:
    """Each preset deviation reverted alone, then all of them together (when more than one); then the same for
    the unranked ones (the Zoo entry's settings the diagnosis does not weigh, e.g. its normalize switch)."""
    return [*_reverts(diagnosis.references.deviations, "revert all", "every preset deviation reverted"),
            *_reverts(diagnosis.references.unranked, "revert all unranked",
                      "every setting that differs from the RL Zoo's entry and the diagnosis does not weigh, reverted")]


def _reverts(deviations: list[Deviation], together_name: str, together_why: str) -> list[Candidate]:
    reverts: list[Candidate] = []
    together: dict[str, Any] = {}
    for d in deviations:
        # Reverting the seed would test another seed; reverting a raised budget would only make
        # the trial shorter than its parent. Neither is a fix.
        if d.key in _NEVER_CHANGED or _lowers_budget(d.key, d.value, d.preset):
            continue
        changes = {d.revert.key: d.revert.suggested}
        together.update(changes)
        reverts.append(Candidate(name=f"revert {d.key}", changes=changes, set_args=override_pairs(changes),
                                 source="revert", why=f"{d.key} is {yaml_value(d.value)} here, "
                                 f"{yaml_value(d.preset)} in {d.reference}"))
    if len(reverts) > 1:
        reverts.append(Candidate(name=together_name, changes=together, set_args=override_pairs(together),
                                 source="revert_all", why=f"{together_why} ({', '.join(together)})"))
    return reverts


def build_candidates(
    diagnosis: Diagnosis, parent_overrides: Mapping[str, Any], max_trials: int = DEFAULT_MAX_TRIALS
) -> list[Candidate]:
    """The config changes worth a trial run, most promising first, at most ``max_trials``.

    Order: the diagnosis' findings (top finding first, warnings and criticals only), then each
    preset deviation reverted alone, then all deviations reverted together, then the same for the
    unranked differences from the RL Zoo's entry. Change sets that repeat
    an earlier one, or that the parent already runs with, are dropped. Raises
    :class:`NoCandidatesError` (a ValueError saying what to do instead) when nothing is left.
    """
    if not 1 <= max_trials <= MAX_TRIALS_LIMIT:
        raise ValueError(f"max_trials must be between 1 and {MAX_TRIALS_LIMIT}, got {max_trials}")
    out: list[Candidate] = []
    seen: set[str] = set()
    for c in [*_finding_candidates(diagnosis), *_revert_candidates(diagnosis)]:
        key = _canonical(c.changes)
        if key in seen or _is_noop(c.changes, parent_overrides):
            continue
        seen.add(key)
        out.append(c)
    if not out:
        raise NoCandidatesError(
            f"nothing to try for run {diagnosis.run_id}: its diagnosis (verdict {diagnosis.verdict}) suggests no "
            f"config change and its config does not differ from the preset {diagnosis.config_id} (nor from the RL "
            f"Zoo's entry, where it has one); "
            f"see why with `gsolve diagnose {diagnosis.run_id}`, or judge your own change over seeds with "
            f"`gsolve fix {diagnosis.run_id} --set key=value`"
        )
    return out[:max_trials]
