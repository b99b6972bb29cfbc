"""Frames per second of the Atari preset (PongNoFrameskip-v4:ppo) on this machine, in env steps
(agent steps: each is 4 emulator frames), three ways, in one process one after the other:

- env:      the 8 preprocessed Pong envs alone, stepped with random actions (the emulator's ceiling);
- rollout:  PPO's rollout collection (envs + the Nature CNN choosing each action);
- training: whole PPO iterations of the preset (rollout + 4 epochs of minibatch updates + logging),
            read from the run's own metrics.csv (``time/fps``) and wall clock.

Then the expected time to spend a budget: ``--solve-steps`` (default 10M, the RL Zoo's and CleanRL's
Pong budget) divided by the training fps. On a shared machine the figures move with the others'
load; run it when the machine is quiet, and compare arms from the same run.

    .venv/bin/python bench/bench_atari.py                  # 3 training iterations (~25k env steps)
    .venv/bin/python bench/bench_atari.py --iterations 1   # quicker
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

CONFIG_ID = "PongNoFrameskip-v4:ppo"


def bench_env(steps: int) -> float:
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import make_vec_env

    cfg = resolve_config(CONFIG_ID, ["device=cpu"])
    env = make_vec_env(cfg, cfg.n_envs)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(rng.integers(0, 6, size=cfg.n_envs))
    elapsed = time.perf_counter() - t0
    env.close()
    return steps * cfg.n_envs / elapsed


def bench_rollout(steps: int, device: str) -> float:
    import torch

    from agents.common import ActorCritic, ObsNormalizer, resolve_device
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import make_vec_env, space_spec
    from gymnasium_solver.rollout import RolloutCollector

    cfg = resolve_config(CONFIG_ID, [f"device={device}"])
    torch.set_num_threads(cfg.torch_threads)
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    policy = ActorCritic(spec, cfg).to(resolve_device(cfg))
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, 0, cfg.reward_clip)
    t0 = time.perf_counter()
    rollout = collector.collect_steps(policy, steps)
    elapsed = time.perf_counter() - t0
    env.close()
    return rollout.env_steps / elapsed


def bench_training(iterations: int, device: str) -> tuple[float, float, str]:
    from gymnasium_solver import run_folder as rf
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.training import train

    cfg = resolve_config(CONFIG_ID, [f"device={device}", "reward_threshold=.inf", "eval_freq=1000000000",
                                     "eval_episodes=1", "checkpoint_freq=0"])
    budget = iterations * cfg.n_envs * cfg.n_steps  # type: ignore[union-attr]
    cfg = cfg.model_copy(update={"max_env_steps": budget})
    with tempfile.TemporaryDirectory() as runs_dir:
        result = train(cfg, Path(runs_dir))
        table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
        info = rf.read_run_info(result.run_dir)
    fps = [v for v in table.column(rf.M.FPS) if v is not None]
    rollout_s = sum(v for v in table.column(rf.M.ROLLOUT_SECONDS) if v is not None)
    update_s = sum(v for v in table.column(rf.M.UPDATE_SECONDS) if v is not None)
    # fps over rollout + update only (the final full-game evaluation is excluded).
    return budget / (rollout_s + update_s), float(np.mean(fps)), str(info.device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=3, help="PPO iterations (8 envs x 128 steps each)")
    parser.add_argument("--device", default="auto", choices=["cpu", "auto", "cuda"])
    parser.add_argument("--solve-steps", type=float, default=10_000_000,
                        help="env steps to convert into time (default: the 10M-step Pong budget)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs (shared; figures move with the load of other processes)")
    env_fps = bench_env(1000)
    print(f"env only (8 envs, random actions):         {env_fps:8,.0f} env steps/s")
    rollout_fps = bench_rollout(256, args.device)
    print(f"rollout (envs + CNN acting, {args.device:>4}):        {rollout_fps:8,.0f} env steps/s")
    train_fps, row_fps, device = bench_training(args.iterations, args.device)
    print(f"training (rollout + update) on {device:>4}:       {train_fps:8,.0f} env steps/s "
          f"(mean of per-iteration time/fps: {row_fps:,.0f})")
    hours = args.solve_steps / train_fps / 3600
    print(f"{args.solve_steps:,.0f} env steps at {train_fps:,.0f} env steps/s: {hours:,.1f} h "
          f"({hours / 24:,.1f} days)")


if __name__ == "__main__":
    main()
