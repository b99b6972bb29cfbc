"""The change sets a fix experiment's trials train: a trial's overrides on top of its parent's config, the
trim's variants (:func:`without`), the extend rung's longer budgets (:func:`longer_budget`) and the explore
rung's arms (:func:`explore_arms`: an entropy bonus, more samples per update) and the arm that gets the longest
budget when nothing solved (:func:`exploring_arm`)."""

from __future__ import annotations

from typing import Any

from gymnasium_solver import config as config_mod
from gymnasium_solver.contract.algorithms import ON_POLICY
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics.rules.exploration import EXPLORING_FINDINGS
from gymnasium_solver.experiments import verdict as vd
from gymnasium_solver.experiments.parent import ParentConfig
from gymnasium_solver.experiments.record import ArmResult, ExperimentRecord, Trial
from gymnasium_solver.launcher import override_pairs

# The extend rung's budgets, as multiples of the arm's own budget: the next only when the last raised the best
# evaluation of a seed it still did not solve.
EXTEND_FACTORS = (2, 4)
# The explore rung's entropy bonus for an on-policy arm (PPO, A2C, REINFORCE) that has none: CleanRL's PPO default, and what many of the RL
# Zoo's discrete-action entries set.
EXPLORE_ENT_COEF = 0.01
# The explore rung's other arm doubles an on-policy arm's parallel envs (the samples of every update, at the same
# budget): an update from twice the samples has half the gradient noise, which is what random-walks a policy that has
# no reward to learn from yet; not past EXPLORE_MAX_ENVS (the diagnosis' reward_never_found doubles them the same way).
EXPLORE_MAX_ENVS = int(B.EXPLORE_MAX_ENVS.value)


def trial_overrides(record: ExperimentRecord, trial: Trial) -> dict[str, Any]:
    """The parent's config plus the trial's changes (today's preset instead for a pure revert to it,
    experiments/parent.py), on the trial's seed."""
    parent = record_parent(record)
    overrides = {**parent.base_for(record.config_id, trial.changes), **trial.changes}
    seed = vd.trial_seed(record, trial)
    if config_mod.resolve_config(record.config_id, override_pairs(overrides), use_zoo=record.use_zoo).seed != seed:
        overrides["seed"] = seed
    return overrides


def record_parent(record: ExperimentRecord) -> ParentConfig:
    """The parent's config as the experiment recorded it (the base every trial starts from)."""
    return ParentConfig(record.parent_overrides, record.drifted, record.use_zoo)


def without(changes: dict[str, Any], key: str) -> dict[str, Any]:
    """``changes`` less ``key``, for the trim; a longer budget goes with the exploration_fraction set beside it
    (longer_budget shortens the fraction so that exploration ends at the same env step: kept without the
    budget it would make exploration that many times shorter, a run no candidate tried)."""
    drop = vd.BUDGET_KEYS if key == "max_env_steps" else {key}
    return {k: v for k, v in changes.items() if k not in drop}


def extended_name(arm: str, factor: int) -> str:
    """The name of the extend rung's arm: ``arm`` with ``factor`` times its budget."""
    return f"{arm} with {factor}x the budget"


def longer_budget(record: ExperimentRecord, changes: dict[str, Any], factor: int) -> dict[str, Any] | None:
    """``changes`` with ``factor`` times the max_env_steps the parent's config trains with under them, and an
    exploration_fraction (DQN) divided by ``factor`` so that exploration ends at the same env step: the same
    run, longer. None when the config does not resolve (the trainer refuses it)."""
    cfg = _config_under(record, changes)
    if cfg is None:
        return None
    out = {**changes, "max_env_steps": int(cfg.max_env_steps) * factor}
    fraction = getattr(cfg, "exploration_fraction", None)
    if isinstance(fraction, float) and "exploration_fraction" not in changes:
        out["exploration_fraction"] = round(fraction / factor, 6)
    return out


def exploring_arm(record: ExperimentRecord, arms: list[ArmResult], spent: set[str]) -> ArmResult | None:
    """With no arm that solved a seed: the arm of the best-ranked finding that says the reward was never (or too
    rarely) found, when it ran out of budget (a name in ``spent``). Such a change shows late (the run must first
    stumble on the reward: MiniGrid-DoorKey-8x8-v0:ppo at 200,000 env steps, where twice the envs and an entropy bonus
    solved at 591,872 of 4x the budget and failed at 1x), so no seed's progress can say whether it gets closer."""
    by_name = {a.name: a for a in arms}
    return next((by_name[c.name] for c in record.candidates
                 if c.finding in EXPLORING_FINDINGS and c.name in spent and c.name in by_name), None)


def explore_arms(record: ExperimentRecord, changes: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The explore rung's arms for ``changes``, each (what it adds, the changes): for a seed that never got anywhere,
    whatever the budget, when the parent's config under them is an on-policy algorithm of ours (PPO, A2C,
    REINFORCE). An entropy bonus (EXPLORE_ENT_COEF) when it has none: a policy that stopped looking for a sparse
    reward; twice the parallel envs (up to EXPLORE_MAX_ENVS) when ``changes`` do not set them: updates from twice the
    samples, whose noise does not random-walk the policy before it has a reward to learn from. Empty for another
    algorithm, or a config the trainer refuses; an arm whose config the trainer refuses is left out."""
    cfg = _config_under(record, changes)
    if cfg is None or cfg.algo not in ON_POLICY:
        return []
    arms: list[dict[str, Any]] = []
    ent_coef = getattr(cfg, "ent_coef", None)
    if "ent_coef" not in changes and ent_coef is not None and config_mod.schedule_start(ent_coef) == 0:
        arms.append({**changes, "ent_coef": EXPLORE_ENT_COEF})
    n_envs = int(getattr(cfg, "n_envs", 0) or 0)
    if "n_envs" not in changes and 0 < n_envs and 2 * n_envs <= EXPLORE_MAX_ENVS:
        arms.append({**changes, "n_envs": 2 * n_envs})
    return [(", ".join(f"{k}={v:g}" for k, v in arm.items() if k not in changes), arm) for arm in arms
            if _config_under(record, arm) is not None]


def _config_under(record: ExperimentRecord, changes: dict[str, Any]) -> config_mod.Config | None:
    """The parent's config with ``changes`` as a trial would train it; None when the trainer refuses it."""
    parent = record_parent(record)
    try:
        return config_mod.resolve_config(record.config_id, override_pairs({**parent.base_for(record.config_id, changes),
                                                                           **changes}), use_zoo=record.use_zoo)
    except config_mod.ConfigError:
        return None
