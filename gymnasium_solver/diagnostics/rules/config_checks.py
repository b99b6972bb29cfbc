"""Rules on settings whose size alone explains a failure: gradient clipping, discount horizon,
network width, action noise, clip range. Each works without a preset (absolute bounds with their
reasons in thresholds.py) and, when the run came from a preset, sizes the setting against it."""

from __future__ import annotations

import math

import numpy as np

from gymnasium_solver.contract.algorithms import MAX_ENTROPY
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import Ctx, ev
from gymnasium_solver.diagnostics.deviations import narrowest
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.references import (
    action_half_range,
    band_evidence,
    episode_length,
    horizon,
    std_at,
)
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import failing
from gymnasium_solver.diagnostics.series import RunData, median
from gymnasium_solver.diagnostics.suggest import change, fmt, possessive, start_value

# Adam's epsilon in our trainers (gymnasium_solver/agents/ppo.py uses ppo2's 1e-5; gymnasium_solver/agents/reinforce.py torch's 1e-8).
ADAM_EPS = {"ppo": 1e-5, "reinforce": 1e-8}


def _revert_or(ctx: Ctx, key: str, sign: int, fallback: SuggestedChange) -> SuggestedChange:
    """The preset's value when the run deviates from it the way the mechanism needs, else ``fallback``."""
    d = ctx.deviation(key, sign)
    return d.revert if d is not None else fallback


def _n_params(ctx: Ctx) -> int | None:
    """Parameters of the actor and critic MLPs (gymnasium_solver/agents/common.py), from the config and spaces."""
    obs = ctx.info.observation_shape
    space = ctx.info.action_space
    hidden = ctx.config.get("hidden_sizes")
    if not obs or space is None or not hidden:
        return None
    n_in = int(np.prod(obs))
    n_out = int(space.n or 0) if space.kind == "discrete" else int(np.prod(space.shape or [1]))

    def mlp(sizes: list[int]) -> int:
        return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))

    return mlp([n_in, *hidden, n_out]) + mlp([n_in, *hidden, 1])


def time_limited_length(data: RunData) -> float | None:
    """The episode length when every episode of the last half of the run ran to the same limit (the
    time limit: the task never ended sooner), else None."""
    _, y = data.finite(M.EP_LEN_MEAN)
    late = y[len(y) // 2:]
    if len(late) < 3:
        return None
    top = float(np.max(y))
    return top if float(np.min(late)) >= B.TIME_LIMITED_FRACTION.value * top else None


@rule("grad_clip_throttles")
def grad_clip_throttles(ctx: Ctx) -> Finding | None:
    clip = ctx.config.get("max_grad_norm")
    x, g = ctx.data.finite(M.GRAD_NORM)
    if clip is None or len(g) < T.MIN_UPDATES.value or not failing(ctx):
        return None
    clip = float(clip)
    ratio = median(g) / clip
    if not ratio > T.GRAD_CLIP_BINDING.value:
        return None
    n = _n_params(ctx)
    eps = ADAM_EPS.get(ctx.algo, 1e-5)
    per_param = clip / math.sqrt(n) if n else None
    step = per_param / (per_param + eps) if per_param else None
    band = ctx.bands.get(M.APPROX_KL)
    kl_low = band is not None and band.position == "below" and (band.ratio or 1) < 1 / T.BAND_RATIO_HIGH.value
    if not ((step is not None and step < T.ADAM_STEP_FRACTION.value) or kl_low):
        return None  # the clip binds, but Adam rescales a uniformly clipped gradient: harmless
    evidence = [ev(M.GRAD_NORM, x, f"pre-clip median {fmt(median(g))} = {fmt(ratio)}x max_grad_norm={fmt(clip)}",
                   f"< {T.GRAD_CLIP_BINDING.value:g}x the clip ({T.GRAD_CLIP_BINDING.source})")]
    if step is not None:
        evidence.append(Evidence(metric="config:max_grad_norm", observed=(
            f"clipped gradient per parameter ~{fmt(per_param)} ({n} parameters) vs Adam eps {eps:g}: each step "
            f"is ~{fmt(100 * step)}% of a normal one"), healthy=f">= {100 * T.ADAM_STEP_FRACTION.value:g}% "
            f"({T.ADAM_STEP_FRACTION.source})"))
    if band is not None:
        evidence.append(band_evidence(band))
    suggested = max(0.5, float(f"{median(g):.1g}")) if clip < 0.5 else float(f"{median(g):.1g}")
    fix = _revert_or(ctx, "max_grad_norm", -1, change(
        "max_grad_norm", clip, suggested, "increase", "a clip near the typical gradient norm only cuts spikes"))
    # Computed from the clip and Adam's eps, the step is provably shrunk: this explains a near-zero KL (and
    # outranks approx_kl_near_zero's reading of it as a learning rate too low); a KL band alone does not.
    proven = step is not None and step < T.ADAM_STEP_FRACTION.value
    return Finding(
        id="grad_clip_throttles", severity=Severity.WARNING,
        score=0.96 if proven else 0.9,
        title="Gradient clipping throttles every update",
        evidence=evidence,
        cause=f"max_grad_norm={fmt(clip)} is {fmt(ratio)}x below the typical gradient norm, so every update is "
        "rescaled to a step too small to learn from (clipping is meant to cut rare spikes).",
        suggested_changes=[fix],
    )


@rule("horizon_too_short")
def horizon_too_short(ctx: Ctx) -> Finding | None:
    gamma = ctx.config.get("gamma")
    if gamma is None or not failing(ctx) or not ctx.finished and ctx.too_early:
        return None
    h = horizon(float(gamma))
    ep = episode_length(ctx.data)
    dev = ctx.deviation("gamma", -1)
    long_episodes = ep is not None and ep >= 10 * h  # the horizon sees under a tenth of an episode
    short_abs = h <= T.HORIZON_MIN_STEPS.value and (ep is None or long_episodes)
    # Myopic: an end-of-episode reward a few steps away is discounted to nothing (a gridworld's goal).
    short_abs = short_abs or (h <= T.HORIZON_MYOPIC_STEPS.value and ep is not None and ep >= 3 * h)
    # Episodes that all run to the time limit never showed the agent their end (the goal, a crash):
    # a horizon that is a sliver of them cannot value reaching it.
    limit = time_limited_length(ctx.data)
    short_abs = short_abs or (limit is not None and h < B.HORIZON_EPISODE_FRACTION.value * limit)
    # Far below a config tuned for this env (a preset, the Zoo's entry). gsolve's defaults are not tuned for it, so
    # against them the task must say so too: episodes at least 10 horizons long, as in the absolute test (a user's
    # gamma 0.9 on 28-step episodes, or 0.95 on 70-step ones, heldout73 c03 and c07, solves; 0.9 on CartPole's
    # 140-step ones, heldout22 v38, did not).
    untuned = dev is not None and dev.source == "default"
    short_rel = (dev is not None and h < T.HORIZON_PRESET_RATIO.value * horizon(float(dev.preset))
                 and (not untuned or long_episodes))
    if not (short_abs or short_rel):
        return None
    lam = ctx.config.get("gae_lambda")
    credit = f"; GAE credit horizon 1/(1-gamma*lambda) = {fmt(horizon(float(gamma) * float(lam)))} steps" \
        if lam is not None and ctx.algo == "ppo" else ""
    ref = f" vs {possessive(dev.reference)} {fmt(horizon(float(dev.preset)))}" if dev else ""
    changes = [_revert_or(ctx, "gamma", -1, change("gamma", gamma, 0.99, "increase",
                                                   "a 100-step horizon values what happens later in the episode"))]
    lam_dev = ctx.deviation("gae_lambda", -1)
    if lam_dev is not None:
        changes.append(lam_dev.revert)
    return Finding(
        id="horizon_too_short", severity=Severity.WARNING, score=0.88,
        title="The discount horizon is far shorter than the task needs",
        evidence=[Evidence(metric="config:gamma", observed=f"gamma={gamma}: effective horizon 1/(1-gamma) = "
                           f"{fmt(h)} steps{ref}{credit}",
                           healthy=f"> {T.HORIZON_MIN_STEPS.value:g} steps and not far below the preset's "
                           f"({T.HORIZON_MIN_STEPS.source})"),
                  Evidence(metric=M.EP_LEN_MEAN, observed=f"episodes last ~{fmt(ep)} steps",
                           healthy="a horizon that reaches the rewards that matter")],
        cause="The agent values only the next few rewards, so what it does now barely depends on how the "
        "episode ends: it cannot learn behaviour whose payoff comes later.",
        suggested_changes=changes,
    )


@rule("network_too_small")
def network_too_small(ctx: Ctx) -> Finding | None:
    hidden = ctx.config.get("hidden_sizes")
    if hidden is None or not failing(ctx):
        return None
    width = narrowest(hidden)  # 0 for [], no hidden layer: a linear policy and value
    if width == 0 and ctx.info.observation_kind == "discrete":
        return None  # linear in a one-hot state is a table: it represents any policy and value (gsolve's tabular DQN)
    dev = ctx.deviation("hidden_sizes", -1)
    small_rel = dev is not None and width < T.NETWORK_PRESET_RATIO.value * narrowest(dev.preset)
    if not (width <= T.NETWORK_MIN_WIDTH.value or small_rel):
        return None
    layers = f"narrowest layer {width} unit(s)" if hidden else "no hidden layer (linear in the observation)"
    evidence = [Evidence(metric="config:hidden_sizes", observed=f"hidden_sizes={hidden}: {layers}"
                         + (f" vs {possessive(dev.reference)} {narrowest(dev.preset)}" if dev else ""),
                         healthy=f"> {T.NETWORK_MIN_WIDTH.value:g} units ({T.NETWORK_MIN_WIDTH.source})")]
    band = ctx.bands.get(M.EXPLAINED_VARIANCE)
    if band is not None:
        evidence.append(band_evidence(band))
    fix = _revert_or(ctx, "hidden_sizes", -1, change("hidden_sizes", hidden, [64, 64], "increase",
                                                     "64 units per layer fit these policies and values"))
    return Finding(
        id="network_too_small", severity=Severity.WARNING, score=0.88,
        title="The network is too small to represent the policy or the value",
        evidence=evidence,
        cause=(f"A {width}-unit layer squeezes the observation through {width} number(s)" if hidden else
               "Without a hidden layer the policy and the value (or Q-values) are linear functions of the "
               "observation") + ": neither the policy nor the value function can fit the task, whatever the budget.",
        suggested_changes=[fix],
    )


def _action_std(ctx: Ctx) -> tuple[float, float, str] | None:
    """(initial std, late std, source) for a Box action space."""
    _, y = ctx.data.finite(M.ACTION_STD)
    log_std = ctx.config.get("log_std_init")
    if len(y):
        return float(y[0]), median(y[len(y) // 2:]), M.ACTION_STD
    if log_std is not None:
        s = math.exp(float(log_std))
        return s, s, "config:log_std_init"
    return None


def noise_swamps_the_mean(ctx: Ctx) -> bool:
    """The late action std is more than ACTION_STD_HIGH half-ranges of a Box action space (action_noise_too_high's
    test): moving the mean then barely changes an action's probability, so a tiny approx_kl is its consequence."""
    half, std = action_half_range(ctx.info), _action_std(ctx)
    return half is not None and std is not None and std[1] / half > T.ACTION_STD_HIGH.value


@rule("action_noise_too_high", "action_noise_too_low")
def action_noise(ctx: Ctx) -> Finding | None:
    half = action_half_range(ctx.info)
    std = _action_std(ctx)
    if half is None or std is None or not failing(ctx):
        return None
    if ctx.algo in MAX_ENTROPY and not ctx.setting("use_sde", False):
        return None  # SAC's std is a learned output pushed up by its entropy term; log_std_init only seeds gSDE
    first, late, source = std
    log_std = ctx.config.get("log_std_init", 0.0)
    if late / half > T.ACTION_STD_HIGH.value:
        # Down to the usual start; from it or below, down by the factor the late std is too large (a "change" to the
        # value the run already has would change nothing).
        target, why = 0.0, f"the usual start: {std_at(0.0, ctx.config, ctx.data)}"
        if float(log_std) <= 0.0:
            target = round(float(log_std) - math.log(late / half), 2)
            why = f"{fmt(late / half)}x less noise: the late std was {fmt(late / half)}x the action half-range"
        fix = _revert_or(ctx, "log_std_init", 1, change("log_std_init", log_std, target, "decrease", why))
        return Finding(
            id="action_noise_too_high", severity=Severity.WARNING, score=0.88,
            title="Action noise is far too high for the action range",
            evidence=[Evidence(metric=source, observed=f"action std {fmt(first)} at the start, {fmt(late)} late = "
                               f"{fmt(late / half)}x the action half-range {fmt(half)} (log_std_init={log_std})",
                               healthy=f"<= {T.ACTION_STD_HIGH.value:g}x the half-range ({T.ACTION_STD_HIGH.source})")],
            cause="Sampled actions land far outside the range and are clipped to its ends, so the policy's mean "
            "barely affects what happens and its gradient is mostly noise; the std does not shrink fast enough.",
            suggested_changes=[fix],
        )
    if first / half < T.ACTION_STD_LOW.value:
        # With gSDE the std is exp(log_std_init) times the features' scale, read off the logged start.
        scale = first / math.exp(float(log_std)) if ctx.config.get("use_sde") and source == M.ACTION_STD else 1.0
        target = round(math.log(0.5 * half / scale), 2)
        fix = _revert_or(ctx, "log_std_init", -1, change("log_std_init", log_std, target, "increase",
                                                         "std of half the action range explores it: "
                                                         f"{std_at(target, ctx.config, ctx.data)}"))
        return Finding(
            id="action_noise_too_low", severity=Severity.WARNING, score=0.88,
            title="Action noise is far too low to explore",
            evidence=[Evidence(metric=source, observed=f"initial action std {fmt(first)} = {fmt(first / half)}x the "
                               f"action half-range {fmt(half)} (log_std_init={log_std})",
                               healthy=f">= {T.ACTION_STD_LOW.value:g}x the half-range ({T.ACTION_STD_LOW.source})")],
            cause="The policy is nearly deterministic from the first step: it never tries actions different "
            "enough from its initial guess to find better ones.",
            suggested_changes=[fix],
        )
    return None


@rule("clip_range_too_small")
def clip_range_too_small(ctx: Ctx) -> Finding | None:
    clip = ctx.config.get("clip_range")
    if ctx.algo != "ppo" or clip is None or not failing(ctx):
        return None
    start = start_value(clip)
    dev = ctx.deviation("clip_range", -1)
    if not (start < T.CLIP_RANGE_MIN.value or (dev is not None and start < 0.1 * start_value(dev.preset))):
        return None
    x, kl = ctx.data.finite(M.APPROX_KL)
    evidence = [Evidence(metric="config:clip_range", observed=f"clip_range={clip}"
                         + (f" vs {possessive(dev.reference)} {dev.preset}" if dev else ""),
                         healthy=f">= {T.CLIP_RANGE_MIN.value:g} ({T.CLIP_RANGE_MIN.source})")]
    if len(kl):
        evidence.append(ev(M.APPROX_KL, x, f"median {fmt(median(kl))}", f"> {T.APPROX_KL_LOW.value:g}"))
    fix = _revert_or(ctx, "clip_range", -1, change("clip_range", clip, 0.2, "increase", "the PPO paper's 0.2"))
    return Finding(
        id="clip_range_too_small", severity=Severity.WARNING, score=0.9,
        title="The PPO clip range is so small the policy can barely change",
        evidence=evidence,
        cause="Every sample whose probability ratio leaves [1-clip, 1+clip] stops contributing gradient; with a "
        "clip this small that happens after a tiny step, so the policy hardly moves per update.",
        suggested_changes=[fix],
    )
