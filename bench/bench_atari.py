"""Frames per second of the Atari preset (PongNoFrameskip-v4:ppo) on this machine, in env steps
(agent steps: each is 4 emulator frames), three ways, in one process one after the other:

- env:      the 8 preprocessed Pong envs alone, stepped with random actions (the emulator's ceiling);
- rollout:  PPO's rollout collection (envs + the Nature CNN choosing each action);
- PPO iterations: what the trainer repeats (rollout, GAE targets, 4 epochs of minibatch updates),
            after one warm-up iteration; ``--trainer`` also runs the real ``train()`` loop and
            reads its fps from metrics.csv.

Each is given twice: per second of wall time (what you get on this machine now, with whatever else
runs on it) and per second of this process's CPU time (what one idle core gives with
torch_threads=1, as everything here is single-threaded: the figure that does not move with other
people's load). Then the expected time to spend a budget: ``--solve-steps`` (default 10M, the RL
Zoo's and CleanRL's Pong budget) divided by the training fps.

    .venv/bin/python bench/bench_atari.py                    # 3 PPO iterations (3,072 env steps)
    .venv/bin/python bench/bench_atari.py --threads 1 2      # torch_threads 1 and 2, side by side
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np

CONFIG_ID = "PongNoFrameskip-v4:ppo"


class Rate(NamedTuple):
    wall: float  # env steps per wall second
    cpu: float  # env steps per CPU second of this process


@contextmanager
def clocks() -> Iterator[list[float]]:
    """Wall and process CPU seconds spent inside the block: ``[wall, cpu]`` once it ends."""
    out: list[float] = []
    w, c = time.perf_counter(), time.process_time()
    yield out
    out += [time.perf_counter() - w, time.process_time() - c]


def bench_env(steps: int) -> Rate:
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import make_vec_env

    cfg = resolve_config(CONFIG_ID, ["device=cpu"])
    env = make_vec_env(cfg, cfg.n_envs)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    with clocks() as spent:
        for _ in range(steps):
            env.step(rng.integers(0, 6, size=cfg.n_envs))
    env.close()
    return Rate(steps * cfg.n_envs / spent[0], steps * cfg.n_envs / spent[1])


def bench_rollout(steps: int, device: str) -> Rate:
    import torch

    from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer, resolve_device
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import make_vec_env, space_spec
    from gymnasium_solver.train.rollout import RolloutCollector

    cfg = resolve_config(CONFIG_ID, [f"device={device}"])
    torch.set_num_threads(cfg.torch_threads)
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    policy = ActorCritic(spec, cfg).to(resolve_device(cfg))
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, 0, cfg.reward_clip)
    with clocks() as spent:
        rollout = collector.collect_steps(policy, steps)
    env.close()
    return Rate(rollout.env_steps / spent[0], rollout.env_steps / spent[1])


def bench_iterations(iterations: int, device: str, threads: int) -> tuple[Rate, str]:
    """PPO iterations of the preset, exactly what ``train()`` repeats (collect, targets, update), on
    both clocks; setup and evaluations are left out (``bench_trainer`` covers the real loop)."""
    import torch

    from gymnasium_solver.agents.common import ObsNormalizer
    from gymnasium_solver.agents.ppo import PPO
    from gymnasium_solver.config import PPOConfig, resolve_config
    from gymnasium_solver.envs import make_vec_env, space_spec
    from gymnasium_solver.train.rollout import RolloutCollector

    cfg = resolve_config(CONFIG_ID, [f"device={device}", f"torch_threads={threads}"])
    assert isinstance(cfg, PPOConfig)
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    agent = PPO(cfg, spec)
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, 0, cfg.reward_clip)
    agent.update(agent.targets(agent.collect(collector)), 0.0)  # warm-up: first-call costs
    with clocks() as spent:
        for _ in range(iterations):
            agent.update(agent.targets(agent.collect(collector)), 0.0)
    env.close()
    steps = iterations * cfg.n_envs * cfg.n_steps
    return Rate(steps / spent[0], steps / spent[1]), str(agent.policy.device)


def bench_trainer(iterations: int, device: str) -> float:
    """The real ``train()`` loop for a few iterations: its own fps (metrics.csv ``time/fps``, rollout
    and update wall seconds), as a check on ``bench_iterations``."""
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.contract import run_folder as rf
    from gymnasium_solver.train.training import train

    cfg = resolve_config(CONFIG_ID, [f"device={device}", "reward_threshold=.inf", "eval_freq=1000000000",
                                     "eval_episodes=1", "checkpoint_freq=0"])
    budget = iterations * cfg.n_envs * cfg.n_steps  # type: ignore[union-attr]
    cfg = cfg.model_copy(update={"max_env_steps": budget})
    with tempfile.TemporaryDirectory() as runs_dir:
        result = train(cfg, Path(runs_dir))
        table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    return budget / sum(r + u for r, u in zip(table.column(rf.M.ROLLOUT_SECONDS), table.column(rf.M.UPDATE_SECONDS),
                                               strict=True) if r is not None and u is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=3, help="PPO iterations (8 envs x 128 steps each)")
    parser.add_argument("--device", default="auto", choices=["cpu", "auto", "cuda"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1], help="torch_threads arms for training")
    parser.add_argument("--trainer", action="store_true", help="also run the real train() loop (wall fps only)")
    parser.add_argument("--solve-steps", type=float, default=10_000_000,
                        help="env steps to convert into time (default: the 10M-step Pong budget)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at the start (others' jobs slow the wall figures)")
    print(f"{'':44}{'per wall s':>12}{'per CPU s':>12}  (env steps)")
    env = bench_env(500)
    print(f"{'env only (8 envs, random actions)':44}{env.wall:12,.0f}{env.cpu:12,.0f}")
    rollout = bench_rollout(128, args.device)
    print(f"{'rollout (envs + CNN acting, ' + args.device + ')':44}{rollout.wall:12,.0f}{rollout.cpu:12,.0f}")
    for threads in args.threads:
        rate, device = bench_iterations(args.iterations, args.device, threads)
        label = f"PPO iterations on {device}, torch_threads={threads}"
        print(f"{label:44}{rate.wall:12,.0f}{rate.cpu:12,.0f}")
        for name, fps in (("wall", rate.wall), ("CPU", rate.cpu)):
            hours = args.solve_steps / fps / 3600
            print(f"  {args.solve_steps:,.0f} env steps at the {name} rate: {hours:,.1f} h ({hours / 24:.1f} days)")
    if args.trainer:
        print(f"{'train() loop (metrics.csv, rollout + update)':44}{bench_trainer(args.iterations, args.device):12,.0f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
