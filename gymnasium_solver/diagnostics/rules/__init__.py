"""The diagnostic rules, grouped by what they look at. Each is a plain function
``rule(ctx) -> Finding | None`` registered with the finding ids it can emit.

A rule fires on a sustained condition (medians over windows, never one point), says what it saw
against the healthy range (thresholds.py, with sources) or against solved reference runs, names
the mechanism and suggests a config change that applies as printed. ``score`` orders findings by
how likely they explain the outcome: mechanisms (clipping that throttles every update, a KL far
above solved runs') score above symptoms (a plateau), which score above side observations.
"""

from gymnasium_solver.diagnostics.rules import (  # noqa: F401 - importing registers the rules
    config_checks,
    exploration,
    offpolicy,
    offpolicy_settings,
    onpolicy_settings,
    optimisation,
    policy,
    returns,
    run_state,
    threshold_luck,
    value,
)
from gymnasium_solver.diagnostics.rules.registry import IDS_BY_RULE, RULES

# Every id a rule can produce, for docs and tests.
RULE_IDS: tuple[str, ...] = tuple(dict.fromkeys(i for ids in IDS_BY_RULE.values() for i in ids))

__all__ = ["RULES", "RULE_IDS"]
