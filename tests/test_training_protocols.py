"""The loop drives each algorithm in its own protocol (issue 24): off-policy agents learn while they
collect, the session guards their gradient steps with one copy of the weights, and the time columns
split acting and env steps (rollout) from gradient steps (update) for them too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gymnasium_solver.agents.common import ObsNormalizer, UpdateStats
from gymnasium_solver.agents.dqn import DQN
from gymnasium_solver.agents.interface import LearnChunk
from gymnasium_solver.config import DQNConfig, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train import checkpoint_retention as retention
from gymnasium_solver.train import training
from gymnasium_solver.train.rollout import RolloutCollector

_STATS = UpdateStats(None, None, None, None, None, None, None)


class _Clock:
    """A stand-in for time.perf_counter that only the fakes below move."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_off_policy_iteration_splits_its_time_into_gradient_steps_and_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """8 s of learning of which 5 s were gradient steps, then 0.5 s of measuring: rollout 3 s, update 5.5 s."""
    clock = _Clock()
    monkeypatch.setattr(training.time, "perf_counter", clock)

    class Agent:
        def stats(self) -> UpdateStats:
            clock.now += 0.5
            return _STATS

    class Session:
        def guarded_learn(self, agent: Any) -> LearnChunk:
            clock.now += 8.0
            return LearnChunk(env_steps=512, gradient_seconds=5.0)

    it = training._off_policy_iteration(Session(), Agent())  # type: ignore[arg-type]
    assert it == (512, 3.0, 5.5, _STATS)


def test_an_on_policy_iteration_times_collecting_apart_from_targets_and_update(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(training.time, "perf_counter", clock)

    class Agent:
        def collect(self, collector: Any) -> Any:
            clock.now += 2.0
            return type("R", (), {"env_steps": 256})()

        def targets(self, rollout: Any) -> str:
            clock.now += 0.25
            return "batch"

    class Session:
        collector = None

        def guarded_update(self, agent: Any, batch: str) -> UpdateStats:
            assert batch == "batch"
            clock.now += 1.0
            return _STATS

    assert training._on_policy_iteration(Session(), Agent()) == (256, 2.0, 1.25, _STATS)  # type: ignore[arg-type]


def _dqn(*overrides: str) -> tuple[DQN, RolloutCollector]:
    cfg = resolve_config("CartPole-v1:dqn", ["n_envs=2", "train_freq=4", "gradient_steps=1", *overrides])
    assert isinstance(cfg, DQNConfig)
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    return DQN(cfg, spec), RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, 0)


def test_dqn_learns_while_it_collects_and_reports_only_its_gradient_steps_time() -> None:
    agent, collector = _dqn("iteration_steps=64", "learning_starts=64", "max_env_steps=1000")
    before = [p.detach().clone() for p in agent.policy.parameters()]
    first = agent.learn(collector)  # all 64 steps before learning_starts: no gradient step at all
    assert first == LearnChunk(64, 0.0) and agent.n_updates == 0
    assert all(torch.equal(a, b) for a, b in zip(before, agent.policy.parameters(), strict=True))
    second = agent.learn(collector)  # 8 vector steps of 2 envs, one gradient step after each
    assert second.env_steps == 64 and second.gradient_seconds > 0.0 and agent.n_updates == 8
    assert agent.stats().extra[rf.M.N_UPDATES] == 8.0  # type: ignore[index]
    collector.env.close()


@pytest.mark.parametrize("how", ["weights", "raise"])
def test_a_non_finite_off_policy_iteration_puts_back_its_starting_weights(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """The third iteration's gradient steps leave a NaN weight (an overflowing step) or raise on a NaN loss
    (SB3's agent): the run fails non_finite_loss and `last` holds the weights the second iteration ended
    with (its periodic checkpoint's), the one copy the session made."""
    real_learn = DQN.learn
    calls = {"n": 0}

    def learn(self: DQN, collector: Any) -> LearnChunk:
        chunk = real_learn(self, collector)
        calls["n"] += 1
        if calls["n"] == 3:
            with torch.no_grad():
                next(self.policy.parameters())[0, 0] = float("nan")
            if how == "raise":
                from gymnasium_solver.agents.common import NonFiniteLossError

                raise NonFiniteLossError("non-finite TD loss (nan) at gradient step 1")
        return chunk

    monkeypatch.setattr(DQN, "learn", learn)
    cfg = resolve_config("CartPole-v1:dqn", ["seed=0", "max_env_steps=4096", "iteration_steps=512",
                                             "learning_starts=256", "checkpoint_freq=512", "eval_freq=4096",
                                             "eval_episodes=1", "reward_threshold=1000"])
    result = training.train(cfg, tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert info.status == rf.RunStatus.FAILED and info.stop_reason == rf.StopReason.NON_FINITE_LOSS
    assert info.failure is not None and info.failure.iteration == 2  # the last iteration completed
    expected = ("non-finite TD loss (nan) at gradient step 1" if how == "raise"
                else f"dqn produced non-finite weights at {info.failure.env_steps} env steps")
    assert info.failure.message == expected
    checkpoints = result.run_dir / rf.CHECKPOINTS_DIR
    second = [k for k in retention.existing(result.run_dir, rf.PERIODIC_CHECKPOINT_PREFIX)
              if k.env_steps < info.failure.env_steps]
    ended_second = torch.load(checkpoints / f"{retention.periodic_name(max(k.env_steps for k in second))}.pt",
                              weights_only=True)["model"]
    last = torch.load(checkpoints / f"{rf.LAST_CHECKPOINT}.pt", weights_only=True)["model"]
    assert last.keys() == ended_second.keys()
    assert all(torch.equal(last[k], ended_second[k]) for k in last)
    assert all(np.isfinite(v.numpy()).all() for v in last.values())


def test_a_non_finite_sb3_iteration_puts_back_its_starting_weights(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """SB3's agent stops at the first train_freq whose loss or weights are not finite; the session, not the
    agent, puts back the weights the previous iteration ended with."""
    pytest.importorskip("stable_baselines3")
    from gymnasium_solver.agents.sb3 import SB3Agent

    real = SB3Agent._collect_and_train
    calls = {"n": 0}

    def collect_and_train(self: SB3Agent) -> float:
        seconds = real(self)
        calls["n"] += 1
        if calls["n"] == 150:  # in the second iteration of 100 steps (train_freq 1)
            with torch.no_grad():
                next(self.model.policy.actor.parameters()).view(-1)[0] = float("nan")
        return seconds

    monkeypatch.setattr(SB3Agent, "_collect_and_train", collect_and_train)
    cfg = resolve_config("Pendulum-v1:sac", ["seed=0", "max_env_steps=400", "iteration_steps=100", "train_freq=1",
                                             "gradient_steps=1", "learning_starts=50", "checkpoint_freq=100",
                                             "eval_freq=400", "eval_episodes=1"])
    result = training.train(cfg, tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert info.stop_reason == rf.StopReason.NON_FINITE_LOSS and info.failure is not None
    assert info.failure.message == "sac produced a non-finite loss or weight at 150 env steps"
    assert info.failure.iteration == 1
    checkpoints = result.run_dir / rf.CHECKPOINTS_DIR
    first = torch.load(checkpoints / f"{retention.periodic_name(100)}.pt", weights_only=True)["model"]
    last = torch.load(checkpoints / f"{rf.LAST_CHECKPOINT}.pt", weights_only=True)["model"]
    assert last.keys() == first.keys() and all(torch.equal(last[k], first[k]) for k in last)


def test_the_sb3_weight_guard_flags_nan_and_inf_but_not_large_finite_weights() -> None:
    """The guard's fused norm overflows on a weight of 1e30 (its square is past float32's range): that weight is
    finite, so the guard must confirm element-wise before calling the model broken."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import TD3

    from gymnasium_solver.agents.sb3 import SB3Policy

    policy = SB3Policy(TD3("MlpPolicy", "Pendulum-v1", buffer_size=1, seed=0), spec=None)  # type: ignore[arg-type]
    weight = next(policy.model.policy.critic_target.parameters())
    assert policy.all_finite()
    for value, finite in ((1e30, True), (float("inf"), False), (float("nan"), False), (0.5, True)):
        with torch.no_grad():
            weight.view(-1)[0] = value
        assert policy.all_finite() is finite, value
