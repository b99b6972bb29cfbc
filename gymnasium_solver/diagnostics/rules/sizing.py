"""What the settings rules share: whether a run is failing, a setting as evidence, and the quantities
its settings imply (rollout size, budget, reward per step, the scale of the critic's targets,
gradient steps taken), each computed from the run's own config and metrics."""

from __future__ import annotations

from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics.context import Ctx
from gymnasium_solver.diagnostics.models import Evidence
from gymnasium_solver.diagnostics.offpolicy_budget import budget
from gymnasium_solver.diagnostics.references import episode_length, horizon
from gymnasium_solver.diagnostics.series import median
from gymnasium_solver.diagnostics.suggest import fmt


def failing(ctx: Ctx) -> bool:
    """Not solved, and far enough into a live run to be judged."""
    return not ctx.solved and not ctx.too_early


def setting_evidence(key: str, value: object, healthy: str) -> Evidence:
    return Evidence(metric=f"config:{key}", observed=f"{key}={value}", healthy=healthy)


def budget_steps(ctx: Ctx) -> int:
    return int(budget(ctx))


def rollout_size(ctx: Ctx) -> int | None:
    n_steps, n_envs = ctx.setting("n_steps"), ctx.setting("n_envs", 1)
    return int(n_steps) * int(n_envs) if n_steps and n_envs else None


def ppo_steps_per_rollout(ctx: Ctx) -> tuple[int, int] | None:
    """(gradient steps per rollout, minibatches per epoch) of a PPO run: n_epochs x equal minibatches of
    batch_size (agents/ppo.py's rounding); None for another algorithm or a config that does not say."""
    rollout, epochs, batch = rollout_size(ctx), ctx.setting("n_epochs"), ctx.setting("batch_size")
    if ctx.algo != "ppo" or not rollout or not epochs or not batch:
        return None
    minibatches = max(1, round(rollout / int(batch)))
    return int(epochs) * minibatches, minibatches


def reward_per_step(ctx: Ctx) -> float | None:
    """Typical |reward| per env step (before reward_scale): |episode return| / episode length over the
    last half of the run (metrics log the environment's own returns)."""
    _, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    length = episode_length(ctx.data)
    if not len(ret) or not length:
        return None
    return abs(median(ret[len(ret) // 2:])) / length


def value_scale(ctx: Ctx) -> tuple[float, str] | None:
    """How large the critic's targets get: |reward| per step x reward_scale x the discount horizon
    (a bound on |V| that the time-limit bootstrap reaches), with how it was computed."""
    per, gamma = reward_per_step(ctx), ctx.setting("gamma")
    if per is None or gamma is None or float(gamma) >= 1:
        return None
    scale = float(ctx.setting("reward_scale", 1.0) or 1.0)
    h = horizon(float(gamma))
    return per * scale * h, (f"|reward| per step {fmt(per)} x reward_scale {fmt(scale)} x horizon 1/(1-gamma) "
                             f"{fmt(h)} = {fmt(per * scale * h)}")


def gradient_steps(ctx: Ctx) -> int | None:
    """Gradient steps an off-policy run made (its logged counter), else None."""
    _, n = ctx.data.finite(M.N_UPDATES)
    return int(n[-1]) if len(n) else None
