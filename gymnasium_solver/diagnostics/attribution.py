"""Which difference from the preset explains which finding.

A finding names a mechanism (updates too large, a critic that does not fit, ...); a deviation
from the preset is *consistent* with it when it moves a key the way that mechanism needs (a
learning rate above the preset's for updates that are too large). A consistent deviation is the
most likely cause: the finding's first suggested change becomes reverting it, and the finding
ranks above findings no deviation explains. When the run failed, no mechanism fired that a
deviation explains, and it still differs from a preset that solves, the differences themselves
are the finding (``preset_deviation``); when nothing at all explains it, ``unexplained_failure``
says so and proposes the experiment (``gsolve fix``).
"""

from __future__ import annotations

from gymnasium_solver.diagnostics.context import Ctx
from gymnasium_solver.diagnostics.models import Deviation, Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import band_evidence
from gymnasium_solver.diagnostics.suggest import best_of, fmt, possessive

# finding id -> (key, sign): sign +1 = the run's value above the preset's is consistent, -1 below,
# 0 either way.
_UPDATE_TOO_LARGE = (("learning_rate", 1), ("n_epochs", 1), ("batch_size", -1), ("clip_range", 1),
                     ("max_grad_norm", 1), ("target_kl", 1))
_UPDATE_TOO_SMALL = (("learning_rate", -1), ("clip_range", -1), ("n_epochs", -1), ("max_grad_norm", -1),
                     ("target_kl", -1))
MECHANISM_KEYS: dict[str, tuple[tuple[str, int], ...]] = {
    "non_finite_loss": (("learning_rate", 1), ("reward_scale", 1), ("log_std_init", 0), ("max_grad_norm", 1),
                        ("n_epochs", 1)),
    "grad_norm_explosion": (("learning_rate", 1), ("max_grad_norm", 1), ("reward_scale", 1)),
    "approx_kl_high": _UPDATE_TOO_LARGE,
    "clip_fraction_high": _UPDATE_TOO_LARGE,
    "learning_rate_too_high": _UPDATE_TOO_LARGE,
    "return_collapse": _UPDATE_TOO_LARGE,
    "entropy_collapse": (*_UPDATE_TOO_LARGE, ("ent_coef", -1), ("log_std_init", -1)),
    "approx_kl_near_zero": _UPDATE_TOO_SMALL,
    "target_kl_stops_epochs": (("target_kl", -1),),
    "entropy_bonus_dominates": (("ent_coef", 1),),
    # Fired only with ent_coef in the range tuned configs use (above it: entropy_bonus_dominates), so a reward
    # scaled down (no usable advantage signal: the bonus and the noise are all the policy sees) goes before it.
    "entropy_no_decrease": (*_UPDATE_TOO_SMALL, ("reward_scale", -1), ("ent_coef", 1), ("hidden_sizes", -1),
                            ("log_std_init", 1)),
    "explained_variance_low": (("vf_coef", -1), ("hidden_sizes", -1), ("reward_scale", 0), ("gamma", 0)),
    "explained_variance_collapse": (("learning_rate", 1), ("reward_scale", 1)),
    "value_loss_exploding": (("reward_scale", 1), ("gamma", 1)),
    "reward_scale_shrinks_gradient": (("reward_scale", -1),),
    "action_noise_saturates": (("action_noise_std", 1),),
    # Too few updates in the budget, or too slow: fewer gradient steps per env step than the preset takes, or a
    # shorter budget. PPO takes n_epochs / batch_size of them per env step whatever the rollout's length, so a
    # larger minibatch goes first (heldout73 c07, heldout22 v24); then the rollout (a longer one, more envs, more
    # episodes per REINFORCE update: A2C's one step per rollout), which is why the budget holds too few updates
    # (512 envs against the Zoo's 16 before a budget of 100k against 500k); the budget last. Fewer PPO epochs cut
    # its gradient steps per env step as a larger minibatch does, whatever the rollout (heldout88 c25: n_epochs=1
    # beside a user's n_steps=256, which was blamed).
    "budget_exhausted_improving": (("batch_size", 1), ("n_epochs", -1), ("n_steps", 1), ("n_envs", 1),
                                   ("episodes_per_update", 1), ("max_env_steps", -1)),
    "grad_clip_throttles": (("max_grad_norm", -1),),
    "horizon_too_short": (("gamma", -1), ("gae_lambda", -1)),
    "network_too_small": (("hidden_sizes", -1),),
    "action_noise_too_high": (("log_std_init", 1),),
    "action_noise_too_low": (("log_std_init", -1),),
    "clip_range_too_small": (("clip_range", -1),),
    # Off-policy (rules/offpolicy.py): the setting each mechanism follows from.
    "exploration_ends_too_early": (("exploration_fraction", -1), ("exploration_final_eps", -1),
                                   ("exploration_initial_eps", -1)),
    "exploration_never_ends": (("exploration_final_eps", 1), ("exploration_fraction", 1)),
    "target_updates_too_rare": (("target_update_interval", 1),),
    "target_updates_too_frequent": (("target_update_interval", -1), ("tau", 1)),
    "q_value_divergence": (("learning_rate", 1), ("gamma", 1), ("reward_scale", 1)),
    "replay_buffer_too_small": (("buffer_size", -1),),
    "learning_starts_too_late": (("learning_starts", 1),),
    # An off-policy run that learns more slowly per env step than its reference: a target that moves less
    # (tau) or less often, a later start, fewer or smaller gradient steps per env step, a lower learning rate.
    "budget_ends_while_learning": (("tau", -1), ("target_update_interval", 1), ("learning_starts", 1),
                                   ("train_freq", 1), ("gradient_steps", -1), ("learning_rate", -1),
                                   ("max_env_steps", -1)),
    # Named from the run's own settings (rules/onpolicy_settings.py, rules/offpolicy_settings.py).
    "critic_not_trained": (("vf_coef", -1),),
    "value_clip_too_tight": (("clip_range_vf", -1),),
    "reward_clip_erases_signal": (("reward_clip", -1),),
    "value_targets_too_large": (("reward_scale", 1), ("gamma", 1)),
    "ppo_one_step_per_rollout": (("n_epochs", -1), ("batch_size", 1)),
    "rollout_too_long": (("n_steps", 1), ("n_envs", 1)),
    "replay_ratio_too_low": (("gradient_steps", -1), ("train_freq", 1)),
    "learning_rate_below_tuned": (("learning_rate", -1),),
    "learning_rate_above_tuned": (("learning_rate", 1),),
    "ppo_too_many_epochs": (("n_epochs", 1),),
    "nstep_returns_too_long": (("n_steps", 1),),
    "dqn_target_frozen": (("tau", -1),),
    "target_network_frozen": (("tau", -1),),
    "actor_updates_starved": (("policy_delay", 1),),
    "entropy_target_unreachable": (("target_entropy", 1),),
    "gae_one_step": (("gae_lambda", -1), ("n_steps", -1)),
    "reinforce_envs_outnumber_episodes": (("n_envs", 1), ("episodes_per_update", -1)),
    "fixed_entropy_bonus_too_large": (("ent_coef", 1), ("ent_coef_auto", 0)),
    "minibatch_too_small": (("batch_size", -1),),
    "threshold_unreachable": (("reward_threshold", 1),),
    "threshold_above_optimum": (("reward_threshold", 1), ("env_kwargs", 0)),
    "threshold_set_for_default_task": (("env_kwargs", 0),),
}
# Never attributed to a config key: the process died or raised.
_NOT_CONFIG = ("run_crashed", "run_error")
# A finding explained by a deviation outranks every mechanism that none explains.
EXPLAINED_BONUS = 0.1


def budget_below_solved(ctx: Ctx) -> bool:
    """The budget is short of what solved runs needed (or nothing says what they needed)."""
    budget = ctx.config.get("max_env_steps", ctx.info.max_env_steps)
    return ctx.steps_to_solve is None or int(budget) < ctx.steps_to_solve[1]


def stalled(ctx: Ctx) -> bool:
    """With no solved run to say what a budget must hold, the run's own curves say whether more steps
    would have helped: an evaluation flat or falling at the end (or too few evaluations for a trend and a
    training return flat or falling), and no training return still rising."""
    ended = ctx.eval_trend.direction if ctx.eval_trend.direction != "unknown" else ctx.train_trend.direction
    return (ctx.steps_to_solve is None and ended in ("flat", "declining")
            and ctx.train_trend.direction != "improving")


def suspects(ctx: Ctx) -> list[Deviation]:
    """The deviations that can explain a failure: every one but a lowered budget that still covers
    what solved runs needed, or that a stalled run never reached the end of its use for."""
    return [d for d in ctx.deviations.values() if d.key != "max_env_steps"
            or (ctx.deviation("max_env_steps", -1) is not None and budget_below_solved(ctx) and not stalled(ctx))]


def consistent(ctx: Ctx, finding_id: str) -> list[Deviation]:
    allowed = {d.key for d in suspects(ctx)}
    return [d for key, sign in MECHANISM_KEYS.get(finding_id, ())
            if (d := ctx.deviation(key, sign)) is not None and d.key in allowed]


def with_relative_evidence(ctx: Ctx, f: Finding) -> Finding:
    """Relative evidence first: for each metric the finding cites that solved runs also recorded,
    the solved runs' band over the same env steps goes before the absolute comparison."""
    extra: list[Evidence] = []
    for e in f.evidence:
        b = ctx.bands.get(e.metric)
        if b is not None and all(x.metric != e.metric for x in extra):
            extra.append(band_evidence(b))
    already = {(x.metric, x.healthy) for x in f.evidence}
    extra = [x for x in extra if (x.metric, x.healthy) not in already]
    return f.model_copy(update={"evidence": extra + f.evidence}) if extra else f


def attribute(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """Link each loud finding to the deviations consistent with it: they go into ``explains`` and
    their reverts lead the finding's suggested changes. Band evidence leads the metric evidence."""
    out = []
    for f in findings:
        f = with_relative_evidence(ctx, f)
        devs = [] if f.severity == Severity.INFO or f.id in _NOT_CONFIG else consistent(ctx, f.id)
        if not devs:
            if f.severity != Severity.INFO and f.id not in _NOT_CONFIG:
                _own_reverts(ctx, f)
            out.append(f)
            continue
        for d in devs:
            if f.id not in d.explains:
                d.explains.append(f.id)
        # The reverts undo the mechanism; the finding's own levers on the same mechanism would then
        # over-correct it (a reverted train_freq plus gradient_steps sized for the faulty one).
        levers = {key for key, _ in MECHANISM_KEYS.get(f.id, ())}
        changes = [_larger_budget(d.revert, f) for d in devs] + [c for c in f.suggested_changes if c.key not in levers]
        cited = {e.metric for e in f.evidence}
        evidence = [Evidence(metric=f"config:{d.key}", observed=f"{d.key}={d.value}: {d.size}",
                             healthy=f"{possessive(d.reference)} {d.key}={d.preset}")
                    for d in devs if f"config:{d.key}" not in cited] + f.evidence
        out.append(f.model_copy(update={"suggested_changes": changes, "evidence": evidence,
                                        "score": round(min(1.0, f.score + EXPLAINED_BONUS), 3)}))
    return _with_budget(ctx, _yield_to_deviations(ctx, out))


def _own_reverts(ctx: Ctx, f: Finding) -> None:
    """A setting that is a name or a switch, not a number (activation, normalize_advantages), has no size a mechanism
    table can state: a finding whose own first change puts such a deviation back (grad_norm_explosion's ReLU -> tanh,
    train_solved_eval_not's advantages normalised again) explains it."""
    first = f.suggested_changes[0] if f.suggested_changes else None
    d = ctx.deviations.get(first.key) if first is not None else None
    if first is not None and d is not None and isinstance(d.value, str | bool) and first.suggested == d.revert.suggested \
            and f.id not in d.explains:
        d.explains.append(f.id)


def _larger_budget(revert: SuggestedChange, f: Finding) -> SuggestedChange:
    """A budget is raised to the larger of the reference's and the finding's own estimate (e.g. 3x at the
    run's rate of progress): a budget only costs time when it is not needed (a run stops once solved),
    and the reference's budget was sized for the reference's config, not this slower one."""
    if revert.key != "max_env_steps" or revert.direction != "increase":
        return revert
    own = next((c for c in f.suggested_changes if c.key == "max_env_steps" and c.direction == "increase"), None)
    if own is None or not isinstance(own.suggested, int | float) or not isinstance(revert.suggested, int | float) \
            or own.suggested <= revert.suggested:
        return revert
    return own


def _with_budget(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """A fix must fit the budget: when the run's budget is below what solved runs needed, every
    config finding's changes also restore the preset's budget (the change alone could not show)."""
    short = ctx.deviation("max_env_steps", -1)
    if short is None or not budget_below_solved(ctx) or ctx.steps_to_solve is None:
        return findings
    out = []
    for f in findings:
        keys = {c.key for c in f.suggested_changes}
        if f.severity != Severity.INFO and keys and "max_env_steps" not in keys and f.id not in _NOT_CONFIG:
            f = f.model_copy(update={"suggested_changes": [*f.suggested_changes, short.revert]})
        out.append(f)
    return out


# A finding that blames only keys the run shares with the preset scores this much of its score
# when the run also differs from the preset in ways nothing explains.
PRESET_VALUE_DISCOUNT = 0.5


def _yield_to_deviations(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """Counterfactual: the preset (or the Zoo's entry) solves with its own values, so a finding whose changes
    touch only keys the run shares with it is less likely than the run's own differences, whether another
    finding explains them or not (heldout19 r38: the Zoo's own gamma blamed level with the 16 x 2,048-step
    rollout that left its budget two updates)."""
    if not suspects(ctx):
        return findings
    out = []
    for f in findings:
        keys = {c.key for c in f.suggested_changes}
        at_preset = bool(keys) and not keys & set(ctx.deviations)
        if f.severity == Severity.WARNING and at_preset and f.id not in _NOT_CONFIG:
            f = f.model_copy(update={"score": round(f.score * PRESET_VALUE_DISCOUNT, 3)})
        out.append(f)
    return out


def _unsolved_and_over(ctx: Ctx) -> bool:
    return (not ctx.solved and ctx.finished and ctx.threshold is not None and len(ctx.eval_y) > 0
            and str(ctx.status) not in ("crashed",) and ctx.info.stop_reason not in ("error", "user_stopped"))


_LARGEST_FIRST = ("The largest change (listed first) is the most likely cause; `gsolve fix` tests each revert alone "
                  "and together, by running them.")


def _deviation_words(sources: set[str], alone: bool) -> tuple[str, str]:
    """The title and cause of preset_deviation for what the run's values are held against: a preset that
    solves, the user's own preset, the RL Zoo's tuned entry, or gsolve's untuned defaults. ``alone``: no other
    warning fired (else the title says that what did fire does not trace to these changes)."""
    unexplained = (", and no other mechanism explains the failure" if alone else
                   ", which no mechanism found traces to")
    if sources == {"default"}:
        return ("Differs from gsolve's defaults where its overrides changed them" + unexplained,
                "gsolve's defaults are not tuned for this environment, but they are what this run would have "
                "trained with; it changed them and did not solve. " + _LARGEST_FIRST)
    if sources <= {"rl_zoo", "default"}:
        also = " (and gsolve's defaults for keys the Zoo does not set, which are untuned)" if "default" in sources else ""
        return ("Differs from the RL Zoo's tuned entry for this environment" + unexplained,
                f"The RL Zoo's entry for this environment, which this run's settings came from, is tuned to solve it; "
                f"this run changed it{also} and did not solve. " + _LARGEST_FIRST)
    if sources == {"user_preset"}:
        return ("Differs from its own preset" + unexplained,
                "This run changed its preset and did not solve; if the preset solves here, the changes are the "
                "likely cause. " + _LARGEST_FIRST)
    return ("Differs from the preset that solves" + unexplained,
            "The preset solves this environment; this run changed it and did not. " + _LARGEST_FIRST)


def fallback(ctx: Ctx, findings: list[Finding]) -> list[Finding]:
    """A finished, unsolved run always gets a finding: the preset deviations when no mechanism a
    deviation explains fired, else an explicit 'unexplained' finding with the experiment to run."""
    if not _unsolved_and_over(ctx):
        return findings
    loud = [f for f in findings if f.severity != Severity.INFO]
    top = max(loud, key=lambda f: (f.severity == Severity.CRITICAL, f.score)) if loud else None
    top_explained = top is not None and any(top.id in d.explains for d in ctx.deviations.values())
    devs = [d for d in suspects(ctx) if not d.explains]
    if devs and not top_explained:
        title, cause = _deviation_words({d.source for d in devs}, not loud)
        findings = [*findings, Finding(
            id="preset_deviation",
            severity=Severity.WARNING,
            score=0.7,
            title=title,
            evidence=[Evidence(metric=f"config:{d.key}", observed=f"{d.key}={d.value}: {d.size}",
                               healthy=f"{possessive(d.reference)} {d.key}={d.preset}"
                               + (f" (solved references: {ctx.steps_to_solve[0]:,}-{ctx.steps_to_solve[1]:,} "
                                  "env steps)" if ctx.steps_to_solve else "")) for d in devs],
            cause=cause,
            suggested_changes=[d.revert for d in devs],
        )]
        for d in devs:
            d.explains.append("preset_deviation")
    elif not loud:
        best = ctx.best_eval
        findings = [*findings, Finding(
            id="unexplained_failure",
            severity=Severity.WARNING,
            score=0.3,
            title="Not solved, and no rule explains why",
            evidence=[Evidence(metric=ctx.eval_trend.metric, env_steps_from=ctx.eval_trend.env_steps_from,
                               env_steps_to=ctx.eval_trend.env_steps_to,
                               observed=f"{best_of(best, ctx.threshold)}; eval trend "
                               f"{ctx.eval_trend.direction}", healthy=f">= {fmt(ctx.threshold)}")],
            cause="None of the mechanisms this diagnosis knows fired, and the run matches its preset (or "
            "has none here). The experiment that would tell: run the candidate changes side by side.",
        )]
    return findings
