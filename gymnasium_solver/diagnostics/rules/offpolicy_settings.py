"""Settings rules for the off-policy algorithms (DQN, QR-DQN, SAC, TD3, TQC), named from the run's own
settings and metrics so they work with no preset to revert to: a replay ratio near zero, a replay
minibatch of a few transitions, a soft target that never moves (SAC/TD3/TQC and DQN), n-step returns
far too long for replay, a TD3 actor that is almost never
updated, an SAC entropy target no squashed policy can reach, and a fixed entropy bonus worth more than
the rewards. Each sizes a setting against what the algorithm needs (setting_bounds.py) and cites what
the run logged."""

from __future__ import annotations

import math

from gymnasium_solver.contract.algorithms import EPSILON_GREEDY, HARD_TARGET, MAX_ENTROPY, REPLAY, SOFT_TARGET
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics.context import Ctx, ev
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity
from gymnasium_solver.diagnostics.references import action_dims
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import (
    budget_steps,
    failing,
    gradient_steps,
    reward_per_step,
    setting_evidence,
)
from gymnasium_solver.diagnostics.suggest import change, fmt
from gymnasium_solver.diagnostics.thresholds import Threshold

# The fewest gradient steps per env step a replay algorithm should take: 8x below SB3's default.
REPLAY_RATIO_FLOOR: dict[str, Threshold] = {a: B.REPLAY_RATIO_MIN_DQN if a in EPSILON_GREEDY else B.REPLAY_RATIO_MIN_AC for a in REPLAY}


def suggested_gradient_steps(per_call: int) -> int:
    """The gradient_steps that give REPLAY_RATIO_SUGGESTED gradient steps per env step to a training call every
    ``per_call`` env steps (train_freq x n_envs)."""
    return max(1, round(per_call * B.REPLAY_RATIO_SUGGESTED.value))


@rule("replay_ratio_too_low")
def replay_ratio_too_low(ctx: Ctx) -> Finding | None:
    freq, grad, n_envs = ctx.setting("train_freq"), ctx.setting("gradient_steps"), ctx.setting("n_envs", 1)
    if ctx.algo not in REPLAY or not isinstance(freq, int) or not isinstance(grad, int) or grad < 0 or not n_envs:
        return None  # gradient_steps -1 = one per env step collected
    # SB3 trains every train_freq steps of the vector env, i.e. every train_freq x n_envs env steps.
    per_call = freq * int(n_envs)
    ratio = grad / per_call
    floor = REPLAY_RATIO_FLOOR[ctx.algo]
    if not failing(ctx) or not ratio < floor.value:
        return None
    new = suggested_gradient_steps(per_call)
    # Acting between gradient phases uses a policy (actor-critic) or Q-values (DQN) frozen for the whole gap: past
    # the longest gap tuned runs use, shorten the gap, not only the debt.
    longest, ratio_to, source = ((B.ACTOR_CRITIC_TRAIN_FREQ_MAX, B.ACTOR_CRITIC_REPLAY_RATIO, B.ACTOR_CRITIC_REPLAY_RATIO)
                                 if ctx.algo in SOFT_TARGET else
                                 (B.DQN_TRAIN_FREQ_MAX, B.REPLAY_RATIO_SUGGESTED, B.DQN_TRAIN_FREQ_MAX))
    if freq > longest.value:
        fix = change("train_freq", freq, max(1, round(grad / (int(n_envs) * ratio_to.value))), "decrease",
                     f"{fmt(ratio_to.value)} gradient step(s) per env step, taken often ({source.source})")
    else:
        fix = change("gradient_steps", grad, new, "increase", f"{fmt(B.REPLAY_RATIO_SUGGESTED.value)} gradient "
                     f"steps per env step ({B.REPLAY_RATIO_SUGGESTED.source})")
    done = gradient_steps(ctx)
    envs = f" x {n_envs} envs" if int(n_envs) > 1 else ""
    return Finding(
        id="replay_ratio_too_low", severity=Severity.WARNING, score=0.88,
        title="Too few gradient steps per env step: the network barely trains",
        evidence=[setting_evidence("gradient_steps", grad, f"gradient_steps / (train_freq x n_envs) >= {fmt(floor.value)} "
                           f"({floor.source})"),
                  Evidence(metric=M.N_UPDATES, observed=f"{grad} gradient step(s) per {freq} step(s){envs} = "
                           f"{per_call} env steps (ratio {fmt(ratio)})"
                           + (f"; {done:,} in the whole run" if done is not None else ""),
                           healthy=f">= {fmt(floor.value)}")],
        cause=(f"The network takes one gradient step per {fmt(1 / ratio)} env steps" if grad else
               "The network takes no gradient step at all") + (f", {done:,} in the whole run"
        if done is not None else "") + ": too few to fit the values (tuned runs take one per 1-4 env steps), so the "
        "Q-network (or critic) stays near its initialisation for most of the budget.",
        suggested_changes=[fix],
    )


@rule("minibatch_too_small")
def minibatch_too_small(ctx: Ctx) -> Finding | None:
    """Replay minibatches (and PPO's) of a handful of samples. PPO is checked here too: the same bound, a
    different way to be noise (its advantages are normalised within each minibatch)."""
    batch = ctx.setting("batch_size")
    if not (ctx.algo in REPLAY or ctx.algo == "ppo") or batch is None or not failing(ctx) or not int(batch) < B.MINIBATCH_MIN.value:
        return None
    if ctx.algo == "ppo":
        cause = (f"Each PPO gradient step uses {batch} sample(s), with their advantages normalised among themselves: "
                 "whatever the samples' real advantages, about half come out +1 and half -1, so the policy gradient "
                 "says little more than which of a handful of actions happened to be drawn.")
    else:
        cause = (f"Each gradient step regresses the values on {batch} sampled transition(s): the step follows "
                 "whichever transitions were drawn, so the Q-values (or critic) wander instead of converging.")
    return Finding(
        id="minibatch_too_small", severity=Severity.WARNING, score=0.88,
        title="Minibatches of a few samples: every gradient step is mostly noise",
        evidence=[setting_evidence("batch_size", batch, f">= {B.MINIBATCH_MIN.value:g} ({B.MINIBATCH_MIN.source})")],
        cause=cause,
        suggested_changes=[change("batch_size", batch, 64, "increase", "the RL Zoo's classic-control minibatch"
                                  if ctx.algo != "ppo" else "SB3's PPO default")],
    )


def _target_updates(ctx: Ctx) -> float | None:
    done = gradient_steps(ctx)
    if done is None:
        return None
    every = ctx.setting("policy_delay", 2) if ctx.algo == "td3" else ctx.setting("target_update_interval", 1)
    return done / max(1, int(every or 1))


@rule("target_network_frozen")
def target_network_frozen(ctx: Ctx) -> Finding | None:
    tau = ctx.setting("tau")
    if ctx.algo not in SOFT_TARGET or tau is None or not failing(ctx) or float(tau) >= 0.005:
        return None
    tau = float(tau)
    updates = _target_updates(ctx)
    half_life = math.inf if tau <= 0 else math.log(0.5) / math.log(1 - tau)
    if updates is not None and tau > 0 and not half_life > B.TARGET_LAG_FRACTION.value * updates:
        return None
    if updates is None and tau > 0:
        return None
    moved = "never moves" if tau <= 0 else f"half-life {fmt(half_life)} target updates"
    return Finding(
        id="target_network_frozen", severity=Severity.WARNING, score=0.9,
        title="The target networks barely move: tau is too small",
        evidence=[setting_evidence("tau", tau, f"a half-life <= {B.TARGET_LAG_FRACTION.value:.0%} of the run's target "
                           f"updates ({B.TARGET_LAG_FRACTION.source})"),
                  Evidence(metric=M.N_UPDATES, observed=f"the target {moved}" + (
                      f" over {updates:,.0f} target updates in the run" if updates is not None else ""),
                           healthy="a target that follows the critic within a small part of the run")],
        cause=f"tau={tau} keeps the target critics at (or near) their random initialisation: every Bellman target "
        "is the reward plus a fixed random function, so the critic never learns values beyond one step and the "
        "actor cannot find behaviour that pays off later.",
        suggested_changes=[change("tau", tau, 0.005, "increase", "SB3's default (TD3 and SAC papers)")],
    )


@rule("dqn_target_frozen")
def dqn_target_frozen(ctx: Ctx) -> Finding | None:
    """DQN's soft target (SB3: Polyak with tau every target_update_interval env steps) that takes most of the
    budget to follow the online network."""
    tau, every = ctx.setting("tau", 1.0), ctx.setting("target_update_interval")
    if ctx.algo not in HARD_TARGET or tau is None or not every or not failing(ctx) or float(tau) >= 1:
        return None
    span = budget_steps(ctx)
    lag = math.inf if float(tau) <= 0 else int(every) / float(tau)
    if not lag > B.SOFT_TARGET_HORIZON_FRACTION.value * span:
        return None
    lag_text = "never" if math.isinf(lag) else f"after about {lag:,.0f} env steps"
    return Finding(
        id="dqn_target_frozen", severity=Severity.WARNING, score=0.9,
        title="The DQN target network barely moves: tau is too small for its update interval",
        evidence=[setting_evidence("tau", tau, f"a target that catches up within "
                                   f"{B.SOFT_TARGET_HORIZON_FRACTION.value:.0%} of the budget "
                                   f"({B.SOFT_TARGET_HORIZON_FRACTION.source})"),
                  setting_evidence("target_update_interval", every, f"time constant target_update_interval / tau = "
                                   f"{'inf' if math.isinf(lag) else f'{lag:,.0f}'} env steps vs a budget of {span:,}")],
        cause=f"Every {every} env steps the target moves only {fmt(float(tau))} of the way to the online Q-network, so "
        f"it catches up {lag_text}: the TD targets are the rewards plus a nearly fixed, random next-state value "
        "for most of the run, and the Q-values cannot learn what pays off later.",
        suggested_changes=[change("tau", tau, 1.0, "increase", "a hard copy every target_update_interval steps "
                                  "(SB3's DQN default; Mnih et al. 2015)")],
    )


@rule("nstep_returns_too_long")
def nstep_returns_too_long(ctx: Ctx) -> Finding | None:
    n = ctx.setting("n_steps", 1)
    if ctx.algo not in REPLAY or not n or not failing(ctx) or not int(n) > B.NSTEP_RETURNS_MAX.value:
        return None
    suggested = 3 if ctx.algo in EPSILON_GREEDY else 1
    return Finding(
        id="nstep_returns_too_long", severity=Severity.WARNING, score=0.89,
        title="The n-step returns are too long for off-policy replay",
        evidence=[setting_evidence("n_steps", n, f"<= {B.NSTEP_RETURNS_MAX.value:g} ({B.NSTEP_RETURNS_MAX.source})")],
        cause=f"Each TD target sums {n} replayed rewards before it bootstraps. Those rewards were earned by older, "
        "more random policies, and nothing corrects for it, so the targets value what the old behaviour did, "
        f"not what the current policy would: with {n} steps that bias swamps what bootstrapping learns.",
        suggested_changes=[change("n_steps", n, suggested, "decrease", "3-step returns (Rainbow)" if suggested == 3
                                  else "one-step TD targets (SB3's default)")],
    )


@rule("actor_updates_starved")
def actor_updates_starved(ctx: Ctx) -> Finding | None:
    delay, done = ctx.setting("policy_delay"), gradient_steps(ctx)
    if ctx.algo != "td3" or delay is None or done is None or not failing(ctx) or int(delay) <= 2:
        return None
    actor = done / int(delay)
    if not actor < B.ACTOR_UPDATES_MIN.value:
        return None
    return Finding(
        id="actor_updates_starved", severity=Severity.WARNING, score=0.9,
        title="The actor is almost never updated: policy_delay is too long",
        evidence=[setting_evidence("policy_delay", delay, "2 (TD3 paper)"),
                  Evidence(metric=M.N_UPDATES, observed=f"{done:,} critic steps / policy_delay {delay} = "
                           f"{actor:,.0f} actor (and target) updates", healthy=f">= {B.ACTOR_UPDATES_MIN.value:g} "
                           f"({B.ACTOR_UPDATES_MIN.source})")],
        cause=f"TD3 updates its actor and its target networks once every policy_delay={delay} critic steps: the "
        "deterministic policy gets a handful of gradient steps in the whole run and stays near its random start.",
        suggested_changes=[change("policy_delay", delay, 2, "decrease", "the TD3 paper's delay")],
    )


@rule("action_noise_saturates")
def action_noise_saturates(ctx: Ctx) -> Finding | None:
    # heldout89 c07: TD3 with action_noise_std=10 (ten half-ranges): almost every exploring action lands on a bound.
    std = ctx.setting("action_noise_std")
    if std is None or ctx.algo in MAX_ENTROPY or not failing(ctx) or not float(std) >= B.ACTION_NOISE_MAX.value:
        return None
    clipped = math.erfc(1 / (float(std) * math.sqrt(2)))  # P(|N(0, std)| > 1 half-range), from the centre
    return Finding(
        id="action_noise_saturates", severity=Severity.WARNING, score=0.9,
        title="The exploration noise is as wide as the action range: exploring actions pile up at the bounds",
        evidence=[setting_evidence("action_noise_std", std, f"< {B.ACTION_NOISE_MAX.value:g} half-ranges "
                                   f"({B.ACTION_NOISE_MAX.source})"),
                  Evidence(metric="config:action_noise_std", observed=f"{100 * clipped:.0f}% of the noise alone "
                           "reaches past a bound from the centre of the range (clipped there)",
                           healthy="none at the TD3 paper's 0.1 (ten standard deviations)")],
        cause=f"action_noise_std={std} is {fmt(float(std))} half-ranges of Gaussian noise on every exploring action: "
        "clipped to the bounds, the actions the replay buffer holds are mostly the extremes, whatever the policy "
        "chose, so the critic learns the value of bang-bang control and not of the policy's own actions.",
        suggested_changes=[change("action_noise_std", std, 0.1, "decrease", "the TD3 paper's 0.1 of the range")],
    )


@rule("entropy_target_unreachable")
def entropy_target_unreachable(ctx: Ctx) -> Finding | None:
    target, dims = ctx.setting("target_entropy"), action_dims(ctx.info)
    if ctx.algo not in MAX_ENTROPY or target is None or dims is None or not failing(ctx):
        return None
    ceiling = dims * math.log(2)
    if not float(target) > ceiling:
        return None
    evidence = [setting_evidence("target_entropy", target, f"<= {fmt(ceiling)} nats: {dims} dim(s) x log 2, the entropy of "
                         "a uniform action in [-1, 1], the most a tanh-squashed policy has")]
    x, coef = ctx.data.finite(M.ENT_COEF)
    if len(coef) >= 2:
        evidence.append(ev(M.ENT_COEF, x, f"{fmt(float(coef[0]))} -> {fmt(float(coef[-1]))}",
                           "settles once the entropy meets its target"))
    return Finding(
        id="entropy_target_unreachable", severity=Severity.WARNING, score=0.92,
        title="SAC's entropy target is higher than any squashed policy can reach",
        evidence=evidence,
        cause=f"The automatic temperature rises while the entropy is below target_entropy={target}; no policy "
        "on a bounded action space can get there, so the entropy bonus grows until it swamps the reward and the "
        "policy stays close to uniform noise.",
        suggested_changes=[change("target_entropy", target, float(-dims), "decrease",
                                  "-(action dims), SAC's automatic target (null sets it too)")],
    )


@rule("fixed_entropy_bonus_too_large")
def fixed_entropy_bonus_too_large(ctx: Ctx) -> Finding | None:
    coef, dims, per = ctx.setting("ent_coef"), action_dims(ctx.info), reward_per_step(ctx)
    if ctx.algo not in MAX_ENTROPY or ctx.setting("ent_coef_auto", True) or coef is None or dims is None:
        return None
    if per is None or not failing(ctx) or float(coef) <= 0:
        return None
    bonus = float(coef) * dims * math.log(2)  # the most a tanh-squashed policy's entropy pays per step
    if not bonus > B.ENTROPY_BONUS_REWARD_RATIO.value * per:
        return None
    return Finding(
        id="fixed_entropy_bonus_too_large", severity=Severity.WARNING, score=0.9,
        title="A fixed entropy coefficient pays more for randomness than the task pays for acting well",
        evidence=[setting_evidence("ent_coef", coef, "learned (ent_coef_auto: true), or small next to the rewards"),
                  Evidence(metric=M.EP_RETURN_MEAN, observed=f"entropy bonus up to {fmt(bonus)} per step (ent_coef x "
                           f"{dims} dim(s) x log 2) vs |reward| per step {fmt(per)}",
                           healthy=f"<= {B.ENTROPY_BONUS_REWARD_RATIO.value:g}x the reward per step "
                           f"({B.ENTROPY_BONUS_REWARD_RATIO.source})")],
        cause=f"With ent_coef={coef} fixed, the soft values reward a uniform policy about as much as a good one, "
        "so the actor stays close to random noise.",
        suggested_changes=[change("ent_coef_auto", False, True, "enable",
                                  "SAC's learned temperature, which falls as the policy reaches its entropy target")],
    )
