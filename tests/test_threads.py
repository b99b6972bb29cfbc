"""A run's math threads: torch's and numpy's BLAS alike held to config torch_threads. OpenBLAS left to itself splits a
product of a few rows by a wide layer over every core and waits for each: the numpy forward of a 256x256 policy on 10
evaluation envs took 87x as long as on one thread on a loaded 2-core machine (agents/networks.py: limit_threads)."""

from __future__ import annotations

from pathlib import Path

import torch
from threadpoolctl import threadpool_info, threadpool_limits

from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.checkpoints import checkpoint_path
from gymnasium_solver.train.policy_eval import evaluate_checkpoint, play_episode
from gymnasium_solver.train.training import train


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_a_run_holds_numpy_blas_and_torch_to_its_torch_threads(tmp_path: Path) -> None:
    before = threadpool_limits(limits=2, user_api="blas")  # what OpenBLAS takes on a 2-core machine by itself
    try:
        assert _blas_threads() == {2}
        cfg = resolve_config("CartPole-v1:ppo", ["max_env_steps=64", "n_envs=2", "n_steps=32", "batch_size=64", "eval_episodes=1",
                                                 "torch_threads=1", "checkpoint_freq=0"])
        train(cfg, tmp_path)
        assert _blas_threads() == {1} and torch.get_num_threads() == 1
    finally:
        before.restore_original_limits()


def test_evaluating_or_recording_a_checkpoint_holds_threads_to_its_torch_threads(tmp_path: Path) -> None:
    cfg = resolve_config("CartPole-v1:ppo", ["max_env_steps=64", "n_envs=2", "n_steps=32", "batch_size=64", "eval_episodes=1",
                                             "torch_threads=1", "checkpoint_freq=0"])
    best = checkpoint_path(train(cfg, tmp_path).run_dir, rf.BEST_CHECKPOINT)
    for call in (lambda: evaluate_checkpoint(best, 1, 0), lambda: play_episode(best, 0, max_frames=3)):
        before = threadpool_limits(limits=2, user_api="blas")
        try:
            call()
            assert _blas_threads() == {1} and torch.get_num_threads() == 1
        finally:
            before.restore_original_limits()
