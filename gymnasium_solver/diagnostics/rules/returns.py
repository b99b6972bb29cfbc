"""Rules on the return curves: plateau, collapse, budget, train/eval mismatch, throughput."""

from __future__ import annotations

import numpy as np

from gymnasium_solver.contract.algorithms import EPSILON_GREEDY, OFF_POLICY, ONE_STEP_UPDATE
from gymnasium_solver.contract.run_folder import M, StopReason
from gymnasium_solver.diagnostics import setting_bounds as B
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.context import (
    SLOWER_THAN_SOLVED,
    Ctx,
    budget_covers_solved,
    divergence,
    ev,
    eval_drop_p,
    eval_floor,
    fraction_of,
    late_entropy_fraction,
    late_window,
    late_x,
    material,
    policy_unmoved,
    rolling_median3,
)
from gymnasium_solver.diagnostics.models import Evidence, Finding, Severity, SuggestedChange
from gymnasium_solver.diagnostics.rules.registry import rule
from gymnasium_solver.diagnostics.rules.sizing import setting_evidence
from gymnasium_solver.diagnostics.series import median, split
from gymnasium_solver.diagnostics.suggest import (
    best_of,
    change,
    fmt,
    lr_change,
    round_sig,
    start_value,
)


@rule("diverged_after_solving")
def diverged_after_solving(ctx: Ctx) -> Finding | None:
    """The run solved, trained on, and lost it: the solved policy is in the best checkpoint; a config
    change only matters for runs that keep training past solving."""
    div = divergence(ctx)
    if div is None:
        return None
    x, y = ctx.eval_x, ctx.eval_y
    evidence = [ev(M.EVAL_RETURN_MEAN, x[div.first:], f"reached {fmt(float(y[div.first]))} >= {fmt(div.bar)} at "
                   f"{int(x[div.first]):,} env steps, best {fmt(float(y[div.best]))} at {int(x[div.best]):,}; the last "
                   f"3 evaluations' median {fmt(div.last)} ({fmt(100 * div.lost)}% of the gain lost)",
                   f"stays >= {fmt(fraction_of(div.bar, T.NEAR_SOLVED_FRACTION.value))} once solved")]
    qx, q = ctx.data.finite(M.Q_MEAN)
    if len(q):
        at = int(np.searchsorted(qx, x[div.first], side="right")) - 1
        evidence.append(ev(M.Q_MEAN, qx[max(at, 0):], f"mean Q {fmt(float(q[max(at, 0)]))} when it solved, "
                           f"{fmt(float(q[-1]))} at the end", "steady once the policy is good"))
    changes = []
    if ctx.threshold is not None and not np.isfinite(ctx.threshold):
        changes.append(change("reward_threshold", ctx.threshold, div.bar, "decrease",
                              "stop when solved, so the run ends with the solved policy"))
    if ctx.algo in EPSILON_GREEDY:  # DQN's usual stabilisers: smaller steps, a clipped gradient
        changes.append(lr_change(ctx, 1 / 3, "smaller steps keep the Q-regression from running away once solved"))
        clip = ctx.setting("max_grad_norm", 10.0)
        if clip is None or float(clip) > 100:
            changes.append(change("max_grad_norm", ctx.config.get("max_grad_norm"), 10, "decrease",
                                  "SB3's DQN default clip"))
    rid = ctx.info.run_id
    return Finding(
        id="diverged_after_solving", severity=Severity.WARNING, score=0.92,
        title="Diverged after solving: evaluation fell far below its best after reaching the threshold",
        evidence=evidence,
        cause=f"The run solved and kept training, and later updates destroyed the policy. The solved policy is in "
        f"its best checkpoint: `gsolve eval {rid} --checkpoint best` (`gsolve checkpoints {rid}` lists them). "
        + ("Off-policy value learning can run away once the policy is good (bootstrapped targets on a narrow "
           "replay of good episodes)." if ctx.algo in EPSILON_GREEDY else ""),
        suggested_changes=changes,
    )


@rule("return_plateau")
def return_plateau(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.threshold is None or ctx.too_early or divergence(ctx) is not None:
        return None
    if "improving" in (ctx.eval_trend.direction, ctx.train_trend.direction):
        return None
    trend = ctx.eval_trend if ctx.eval_trend.direction != "unknown" else ctx.train_trend
    if trend.direction != "flat":
        return None
    best = ctx.best_eval
    return Finding(
        id="return_plateau",
        severity=Severity.WARNING,
        score=0.35,
        title="Return has plateaued below the threshold",
        evidence=[Evidence(metric=trend.metric, env_steps_from=trend.env_steps_from, env_steps_to=trend.env_steps_to,
                           observed=f"flat: slope {fmt(trend.slope_per_100k_steps)} per 100k steps "
                           f"(95% CI {fmt(trend.slope_low)}..{fmt(trend.slope_high)}), best eval {fmt(best)}",
                           healthy=f"rising toward {fmt(ctx.threshold)}")],
        cause="Learning has stalled; more steps of the same config are unlikely to solve it. Look at the "
        "other findings for the mechanism.",
    )


@rule("return_collapse")
def return_collapse(ctx: Ctx) -> Finding | None:
    y, x = ctx.eval_y, ctx.eval_x
    if len(y) < T.TREND_MIN_POINTS.value:
        return None
    smooth = rolling_median3(y)
    k = int(np.argmax(smooth))
    peak, base, last = float(smooth[k]), float(y[0]), median(y[-3:])
    _, kl = ctx.data.finite(M.APPROX_KL)
    if len(kl) and median(kl) < T.APPROX_KL_LOW.value:
        return None  # the policy barely moved: a drop in evaluation is noise, not a collapse
    min_gain = T.COLLAPSE_MIN_GAIN.value * abs(ctx.threshold) if ctx.threshold else material(ctx, y)
    if k >= len(y) - 2 or peak - base <= min_gain:
        return None
    drop = (peak - last) / (peak - base)
    if not drop > T.COLLAPSE_PEAK_FRACTION.value:
        return None
    # The peak is the best of len(y) noisy evaluations: a drop from it is a collapse only when the episodes say so
    # (a Blackjack evaluation of 10 episodes of -1/0/+1 swings by 0.6 with no trend), Bonferroni over the evaluations.
    # The peak's episodes are those of the evaluation the rolling median took; the last ones', the last 3 evaluations'.
    lo = max(k - 1, 0)
    j = lo + int(np.argmin(np.abs(y[lo:k + 2] - peak)))
    p = eval_drop_p(ctx, slice(j, j + 1), slice(len(y) - 3, len(y)))
    if p is not None and not p < T.COLLAPSE_NOISE_ALPHA.value / len(y):
        return None
    return Finding(
        id="return_collapse",
        severity=Severity.WARNING,
        score=0.6,
        title="Evaluation return collapsed after a peak",
        evidence=[ev(M.EVAL_RETURN_MEAN, x[k:], f"peak {fmt(peak)} at step {int(x[k])}, last evaluations {fmt(last)} "
                     f"({fmt(100 * drop)}% of the gain lost)",
                     f"keeps > {100 * (1 - T.COLLAPSE_PEAK_FRACTION.value):g}% of its gain ({T.COLLAPSE_PEAK_FRACTION.source})")],
        cause="Late updates destroyed a good policy (steps too large once the policy is sharp).",
        suggested_changes=[lr_change(ctx, 1 / 3, "smaller late updates keep the good policy (or decay it to 0)")],
    )


@rule("budget_exhausted_improving")
def budget_exhausted_improving(ctx: Ctx) -> Finding | None:
    if ctx.solved or not ctx.finished or ctx.algo in OFF_POLICY:
        return None  # off-policy runs: budget_ends_while_learning (sized from Q-values and target periods)
    spent = ctx.info.stop_reason == StopReason.BUDGET_EXHAUSTED or ctx.info.progress.env_steps >= ctx.info.max_env_steps
    if not spent or divergence(ctx) is not None:
        return None  # a run that reached the threshold and lost it had budget enough
    # The evaluation trend is the truth when there is one: a rising training mean next to a
    # declining evaluation is not "still improving".
    ev_dir = ctx.eval_trend.direction
    improving = ev_dir == "improving" or (ev_dir != "declining" and ctx.train_trend.direction == "improving")
    floor = eval_floor(ctx)
    if improving and floor is not None and float(np.max(ctx.train_y, initial=-np.inf)) <= floor:
        # Climbing toward the one value every evaluation returned, never above it: fewer penalties, not the reward
        # (a new user's Taxi-v4 PPO run at 50,000 env steps; at 200,000 and 800,000 it sat at that floor).
        improving = False
    if improving and policy_unmoved(ctx):
        # A policy still as random as at the start after entropy_no_decrease's 20+ updates has learned next to
        # nothing: a rising evaluation of it is its deterministic action flipping, and a training return creeping up
        # at that entropy will not reach the threshold in 3x the budget (heldout74 c02, reward_scale=1e-4: 237
        # updates at 99.9% of log 5, the training return from 0.4 to 3 of 33).
        improving = False
    # "Stopped close to solving" is about where the run stopped: its best evaluation near the threshold, and one of its
    # last three too. A best evaluation the run then fell far from is not "close" (heldout87 c19: ReLU layers, 39.9 of
    # 44 at the first evaluation, -6 to 3 for the last 23 while the critic diverged).
    bar = None if ctx.threshold is None else fraction_of(ctx.threshold, T.NEAR_SOLVED_FRACTION.value)
    near = (bar is not None and ctx.best_eval is not None and ctx.best_eval >= bar
            and float(np.max(ctx.eval_y[-3:])) >= bar)
    budget = int(ctx.config.get("max_env_steps", ctx.info.max_env_steps))
    _, updates = ctx.data.finite(M.POLICY_LOSS)
    fewest = T.MIN_UPDATES_ONE_STEP if ctx.algo in ONE_STEP_UPDATE else T.MIN_UPDATES
    if not (improving or near) and 0 < len(updates) < fewest.value:
        # Too few updates to learn: a rollout larger than the defaults' is the cause, else the budget is.
        budget_change = change("max_env_steps", budget, int(budget * T.BUDGET_STEP.value), "increase",
                               f"{T.BUDGET_STEP.value:g}x the budget")
        smaller = _default_rollout(ctx, budget, fewest.value)
        return Finding(
            id="budget_exhausted_improving",
            severity=Severity.WARNING,
            score=0.75,
            title="The budget allowed too few updates to learn anything",
            evidence=[Evidence(metric=M.POLICY_LOSS, env_steps_from=0, env_steps_to=ctx.info.progress.env_steps,
                               observed=f"{len(updates)} update(s) in a {budget}-step budget; "
                               f"{best_of(ctx.best_eval, ctx.threshold)}",
                               healthy=f">= {int(fewest.value)} updates before judging a config ({fewest.source})")],
            cause=("each update collects far more experience than gsolve's defaults do, so the budget holds only "
                   f"{len(updates)} updates: the run stopped before learning could show." if smaller else
                   "max_env_steps is too small for this config's rollout size: the run stopped before learning "
                   "could show."),
            suggested_changes=[*([smaller] if smaller else []), budget_change],
        )
    if not (improving or near):
        return None
    trend = ctx.eval_trend if ctx.eval_trend.direction == "improving" else ctx.train_trend
    evidence = [Evidence(metric=trend.metric, env_steps_from=trend.env_steps_from, env_steps_to=trend.env_steps_to,
                         observed=f"{trend.direction}: slope {fmt(trend.slope_per_100k_steps)} per 100k steps "
                         f"(95% CI {fmt(trend.slope_low)}..{fmt(trend.slope_high)}); "
                         f"{best_of(ctx.best_eval, ctx.threshold)} at the end of a {budget}-step budget",
                         healthy="flat near the threshold when the budget ends")]
    if trend is ctx.train_trend and ctx.eval_trend.direction != "unknown":
        evidence.append(Evidence(metric=ctx.eval_trend.metric, env_steps_from=ctx.eval_trend.env_steps_from,
                                 env_steps_to=ctx.eval_trend.env_steps_to,
                                 observed=f"{ctx.eval_trend.direction}: slope "
                                 f"{fmt(ctx.eval_trend.slope_per_100k_steps)} per 100k steps",
                                 healthy="the evaluation trend is reported beside the training one"))
    what = _still(ctx, improving)
    change_ = change("max_env_steps", budget, int(budget * T.BUDGET_STEP.value), "increase",
                     f"{T.BUDGET_STEP.value:g}x the budget at the current rate of progress")
    # Far more envs than anyone tunes: each update averages over so many env steps that the budget's updates are
    # few; the default number of envs gives the same budget many times the updates (before raising the budget).
    fewer = _default_rollout(ctx, budget, fewest.value)
    envs = int(ctx.config.get("n_envs") or 1)
    if fewer is not None and fewer.key == "n_envs" and envs > B.N_ENVS_MAX.value:
        times = fmt(envs / int(fewer.suggested))
        evidence.append(setting_evidence("n_envs", envs, f"<= {B.N_ENVS_MAX.value:g} ({B.N_ENVS_MAX.source}): "
                                         f"{len(updates)} updates of {envs} envs in this budget"))
        return Finding(
            id="budget_exhausted_improving", severity=Severity.WARNING, score=0.75,
            title=f"The budget ran out {what}, {envs} envs to an update",
            evidence=evidence,
            cause=f"Each update averages over {envs} envs' steps, {times}x gsolve's default, so the {budget:,}-step "
            f"budget holds {len(updates)} updates where the default number of envs gives {times}x as many: the run "
            "was still learning when it stopped.",
            suggested_changes=[fewer, change_],
        )
    covered = budget_covers_solved(ctx, budget)
    if covered is not None:
        # Compare with what works: solved runs of this environment needed less than this budget,
        # so running out of it is a symptom of learning too slowly, not the cause.
        return Finding(
            id="budget_exhausted_improving", severity=Severity.WARNING, score=0.4,
            title=f"The budget ran out {what}, but solved runs needed less",
            evidence=[*evidence, covered], cause=SLOWER_THAN_SOLVED, suggested_changes=[change_],
        )
    return Finding(
        id="budget_exhausted_improving",
        severity=Severity.WARNING,
        score=0.75,
        title=f"The budget ran out {what}",
        evidence=evidence,
        cause="max_env_steps is too small for this config: " + ("the run was still learning when it stopped."
                                                                if improving else "the run stopped close to solving."),
        suggested_changes=[change_],
    )


def _default_rollout(ctx: Ctx, budget: int, fewest: float) -> SuggestedChange | None:
    """The rollout key furthest above gsolve's default for the algorithm (n_steps or n_envs, or REINFORCE's
    episodes_per_update), back at that default, when the default fits at least ``fewest`` updates into
    ``budget``; else None."""
    from gymnasium_solver.config import CONFIG_MODELS
    from gymnasium_solver.contract.algorithms import Algo

    model = CONFIG_MODELS.get(Algo(ctx.algo)) if ctx.algo in Algo._value2member_map_ else None
    if model is None:
        return None

    def default_of(key: str) -> int | None:
        d = model.model_fields[key].get_default() if key in model.model_fields else None
        return d if isinstance(d, int) and not isinstance(d, bool) else None

    def current_of(key: str) -> int | None:
        v = ctx.config.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    _, length = ctx.data.finite(M.EP_LEN_MEAN)
    best: tuple[float, SuggestedChange] | None = None
    for key in ("episodes_per_update",) if ctx.algo == "reinforce" else ("n_steps", "n_envs"):
        current, default = current_of(key), default_of(key)
        if current is None or default is None or current <= default:
            continue
        n_envs = int(ctx.config.get("n_envs") or 1) if key != "n_envs" else default
        n_steps = int(ctx.config.get("n_steps") or 1) if key == "n_envs" else default
        per_update = default * float(np.median(length)) if key == "episodes_per_update" and len(length) \
            else float(default) if key == "episodes_per_update" else float(n_steps * n_envs)
        if budget / per_update < fewest:
            continue
        if ctx.algo == "ppo" and int(ctx.config.get("batch_size") or 0) > n_steps * n_envs:
            continue  # PPO's minibatch would not fit the smaller rollout: the budget is the simpler change
        what = "episodes" if key == "episodes_per_update" else f"steps x {n_envs} envs" if key == "n_steps" \
            else f"envs x {n_steps} steps"
        c = change(key, current, default, "decrease", f"gsolve's default ({default} {what} per update) fits "
                   f"{fewest:g}+ updates into the {budget}-step budget")
        if best is None or current / default > best[0]:
            best = (current / default, c)
    return best[1] if best else None


def _still(ctx: Ctx, improving: bool) -> str:
    """What the trends say when the budget ended, in the words of the trend fields the result carries."""
    if ctx.eval_trend.direction == "improving":
        return "while the evaluation return was still improving"
    if improving:  # the training return's trend, beside an evaluation trend that is not declining
        return f"while the training return was still improving (evaluation trend {ctx.eval_trend.direction})"
    gap = "" if ctx.threshold is None or ctx.best_eval is None else f" ({best_of(ctx.best_eval, ctx.threshold)})"
    return f"within {100 * (1 - T.NEAR_SOLVED_FRACTION.value):g}% of the threshold{gap}, with no trend still rising"


@rule("train_solved_eval_not", "eval_solved_train_not")
def train_eval_mismatch(ctx: Ctx) -> Finding | None:
    if ctx.threshold is None or len(ctx.train_y) < T.TREND_MIN_POINTS.value or ctx.best_eval is None:
        return None
    late_train = median(split(ctx.train_y)[1])
    thr = ctx.threshold
    far = fraction_of(thr, T.EVAL_TRAIN_GAP_FRACTION.value)
    rel = late_entropy_fraction(ctx)
    if late_train >= thr and not ctx.solved and ctx.best_eval < far:
        evidence = [ev(M.EP_RETURN_MEAN, late_x(ctx.train_x), f"late median {fmt(late_train)}", f">= {fmt(thr)}"),
                    ev(M.EVAL_RETURN_MEAN, ctx.eval_x, f"best {fmt(ctx.best_eval)}", f">= {fmt(thr)}")]
        space = ctx.info.action_space
        unnormalised = ctx.algo in ONE_STEP_UPDATE and ctx.setting("normalize_advantages", None) is False
        if not unnormalised or rel is None or space is None or not space.max_entropy \
                or rel <= T.GREEDY_NEAR_TIES.value:
            return Finding(id="train_solved_eval_not", severity=Severity.WARNING, score=0.5,
                           title="Training return reaches the threshold but evaluation does not", evidence=evidence,
                           cause="The deterministic (argmax) evaluation policy behaves differently from the "
                           "stochastic one that is trained, or evaluation uses different environment settings.")
        return _greedy_near_ties(ctx, evidence, rel)
    # The training return is a lagging mean over 100 episodes, so it trails any improving run;
    # only a sampled policy that is still near-uniform makes the gap a finding.
    if ctx.solved and late_train < far and rel is not None and rel > T.ENTROPY_NO_DECREASE.value:
        ent = ctx.config.get("ent_coef", 0.0)
        changes = []
        if start_value(ent) > 0:
            changes.append(change("ent_coef", ent, 0.0, "decrease", "less randomness in the behaviour policy"))
        return Finding(
            id="eval_solved_train_not",
            severity=Severity.INFO,
            score=0.3,
            title="Evaluation solves it but the training (stochastic) policy does not",
            evidence=[ev(M.EP_RETURN_MEAN, late_x(ctx.train_x), f"late median {fmt(late_train)}", f">= {fmt(far)}"),
                      Evidence(metric=M.ENTROPY, observed=f"late entropy {fmt(100 * rel)}% of the maximum",
                               healthy=f"< {100 * T.ENTROPY_NO_DECREASE.value:g}% once learning")],
            cause="The greedy policy is good but the sampled one is still near-uniform.",
            suggested_changes=changes,
        )
    return None


def _greedy_near_ties(ctx: Ctx, evidence: list[Evidence], rel: float) -> Finding:
    """train_solved_eval_not of A2C or REINFORCE with advantages left unnormalised, when the sampled policy is still
    close to uniform: its return is the spread of near-uniform play, and the argmax evaluation picks one of near-tied
    actions, the same one every step. Unnormalised, they step by the advantages' size: small returns give small steps,
    which an entropy bonus holds near uniform (heldout91 c08: REINFORCE, normalize_advantages=false, ent_coef=0.01,
    90% of log 3 after 451 updates, training return 0.73 of 0.7, every evaluation -1.5)."""
    evidence.append(Evidence(metric=M.ENTROPY, observed=f"late entropy {fmt(100 * rel)}% of the maximum log(n)",
                             healthy=f"< {100 * T.GREEDY_NEAR_TIES.value:g}% ({T.GREEDY_NEAR_TIES.source})"))
    evidence.append(setting_evidence("normalize_advantages", "false", "true, or advantages of a size that moves the "
                                     "policy"))
    bonus = " against the entropy bonus" if start_value(ctx.config.get("ent_coef", 0.0)) > 0 else ""
    return Finding(
        id="train_solved_eval_not", severity=Severity.WARNING, score=0.9,
        title="Training return reaches the threshold but evaluation does not: the policy never committed",
        evidence=evidence,
        cause="The sampled policy is still close to uniform: its return is what near-random play earns here, and "
        "the greedy evaluation takes whichever of near-tied actions is ahead, the same one every step. "
        f"{ctx.algo.upper()} with advantages not normalised steps by the advantages' own size, which small returns "
        f"keep small{bonus}.",
        suggested_changes=[change("normalize_advantages", False, True, "enable", "unit-size advantages give every "
                                  "update a full step, whatever the returns' scale, so the policy commits")],
    )


@rule("throughput_drop")
def throughput_drop(ctx: Ctx) -> Finding | None:
    w = late_window(ctx, M.FPS)
    if w is None:
        return None
    x, y, late = w
    e, lm = median(split(y)[0]), median(late)
    if not (e > 0 and lm < T.FPS_DROP.value * e):
        return None
    return Finding(
        id="throughput_drop",
        severity=Severity.INFO,
        score=0.15,
        title="Throughput dropped during the run",
        evidence=[ev(M.FPS, late_x(x), f"late median {fmt(lm)} fps vs early {fmt(e)} fps",
                     f">= {100 * T.FPS_DROP.value:g}% of early ({T.FPS_DROP.source})")],
        cause="Other processes competing for the CPU, or episodes/evaluations that got slower; not a learning "
        "problem by itself.",
    )


def best_possible_return(ctx: Ctx) -> tuple[float, str] | None:
    """The most any episode can return when the reward is the same every step (returns a linear function
    of episode length: CartPole +1, Acrobot -1 until the goal), with how it was found; else None.
    A positive reward per step needs the time limit, known once evaluation episodes all run to it."""
    ret, length = ctx.data.raw(M.EP_RETURN_MEAN), ctx.data.raw(M.EP_LEN_MEAN)
    if ret is None or length is None:
        return None
    both = np.isfinite(ret) & np.isfinite(length)
    r, n = ret[both], length[both]
    if len(r) < 5:
        return None
    if float(np.ptp(n)) < B.RETURN_FIT_MIN_SPREAD.value:
        return None
    if not np.any(r):
        return None  # paid nothing yet (a sparse goal never reached): a zero every step says nothing of the best
    c, b = np.polyfit(n, r, 1)
    if float(np.max(np.abs(r - (c * n + b)))) > B.RETURN_FIT_TOLERANCE.value * max(float(np.ptp(r)), 1e-9):
        return None
    how = f"returns = {fmt(c)} x episode length {'+' if b >= 0 else '-'} {fmt(abs(b))} over {len(r)} rows"
    if c < 0:
        return c + b, how + ": the shortest episode (1 step) returns the most"
    # A time limit shows as evaluations whose every episode ran the same, longest length.
    _, eval_len = ctx.data.finite(M.EVAL_EP_LEN_MEAN)
    cap = float(np.max(eval_len)) if len(eval_len) else 0.0
    at_cap = int(np.count_nonzero(eval_len == cap)) if len(eval_len) else 0
    if at_cap >= B.TIME_LIMIT_EVALS.value and cap >= float(np.max(n)):
        return c * cap + b, how + f"; {at_cap} evaluations ran every episode to the same {fmt(cap)} steps (the time limit)"
    return None


@rule("threshold_unreachable")
def threshold_unreachable(ctx: Ctx) -> Finding | None:
    if ctx.solved or ctx.threshold is None:
        return None
    best = best_possible_return(ctx)
    if best is None or not ctx.threshold > best[0] + 1e-6:
        return None
    from gymnasium_solver.config.presets import spec_reward_threshold

    registered = spec_reward_threshold(ctx.info.env_id)
    target = registered if registered is not None and registered <= best[0] else round_sig(
        best[0] - 0.05 * abs(best[0]))
    why = (f"Gymnasium's registered threshold for {ctx.info.env_id}" if target == registered
           else "95% of the best return this reward allows")
    return Finding(
        id="threshold_unreachable", severity=Severity.CRITICAL, score=0.99,
        title="The reward threshold is above the best return this environment allows",
        evidence=[Evidence(metric=M.EP_RETURN_MEAN, observed=f"{best[1]}: at most {fmt(best[0])}",
                           healthy=f">= reward_threshold {fmt(ctx.threshold)}"),
                  Evidence(metric=M.EVAL_RETURN_MEAN, observed=f"best evaluation {fmt(ctx.best_eval)}",
                           healthy=f"reaches {fmt(ctx.threshold)} only if the threshold can be reached")],
        cause=f"No policy can return {fmt(ctx.threshold)} here: the reward is the same every step, so a return "
        f"is fixed by the episode's length and the best any episode gets is {fmt(best[0])}. The run cannot "
        "solve whatever it learns; the threshold is wrong, not the agent.",
        suggested_changes=[change("reward_threshold", ctx.threshold, target, "decrease", why)],
    )


# A keyword that changes what the reward pays names it (Gymnasium's sutton_barto_reward, goal_velocity,
# MuJoCo's forward_reward_weight, ctrl_cost_weight, healthy_reward); is_slippery, map_name, gravity do not.
REWARD_WORDS = ("reward", "cost", "weight", "bonus", "penalty", "goal", "shap", "sparse", "dense")


@rule("reward_does_not_pay")
def reward_does_not_pay(ctx: Ctx) -> Finding | None:
    """env_kwargs that change the reward: episodes get much longer (the agent learns the task) while the
    returns do not move, so the registered threshold, set for the default reward, cannot be reached."""
    kwargs = ctx.setting("env_kwargs")
    if ctx.solved or ctx.too_early or ctx.threshold is None or not isinstance(kwargs, dict) or not kwargs:
        return None
    if not any(word in str(k).lower() for k in kwargs for word in REWARD_WORDS):
        return None  # keywords of the dynamics or the layout (is_slippery, map_name, gravity): the reward is the same
    _, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    _, length = ctx.data.finite(M.EP_LEN_MEAN)
    if len(ret) < 5 or len(length) < 5 or float(np.min(length)) <= 0 or not np.any(ret):
        return None  # (no return but 0: a sparse reward never reached, not a reward that does not pay)
    growth = float(np.max(length)) / float(np.min(length))
    gap = ctx.threshold - float(np.max(ret))
    if not (growth >= B.LENGTH_GROWTH_MIN.value and gap > 0 and float(np.ptp(ret)) < B.RETURN_FLAT_GAP_FRACTION.value * gap):
        return None
    rel = late_entropy_fraction(ctx)
    if rel is not None and rel < T.ENTROPY_COLLAPSE.value:
        return None  # a policy gone deterministic repeats one path until the time limit: longer, unpaid episodes
        # are it being stuck (entropy_collapse), not it having learnt a task the reward does not pay for
    return Finding(
        id="reward_does_not_pay", severity=Severity.CRITICAL, score=0.98,
        title="The agent's episodes changed but its return did not: env_kwargs changed what the reward pays",
        evidence=[Evidence(metric=M.EP_LEN_MEAN, observed=f"training episodes {fmt(float(np.min(length)))} to "
                           f"{fmt(float(np.max(length)))} steps ({fmt(growth)}x)",
                           healthy="returns that move as the behaviour changes"),
                  Evidence(metric=M.EP_RETURN_MEAN, observed=f"returns within {fmt(float(np.min(ret)))}.."
                           f"{fmt(float(np.max(ret)))} the whole run", healthy=f"rising towards {fmt(ctx.threshold)}"),
                  setting_evidence("env_kwargs", kwargs, "the environment's own reward, which the registered "
                                   "reward_threshold is set for")],
        cause=f"The agent's behaviour changed a lot (episodes {fmt(growth)}x longer) while its return stayed within a "
        f"sliver of its range: under env_kwargs={kwargs} the reward does not pay for what the threshold "
        f"{fmt(ctx.threshold)} measures, so no policy reaches it. The task is mis-specified, not the agent.",
        suggested_changes=[change("env_kwargs", kwargs, {}, "disable", "the environment's default reward, which "
                                  "the registered reward_threshold is for (or set a reward_threshold this reward "
                                  "can reach)")],
    )
