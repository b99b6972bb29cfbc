"""Our DQN (gymnasium_solver/agents/dqn.py) makes Stable-Baselines3's DQN gradient step, stores n-step returns as SB3's
targets need them, explores and moves its target network on SB3's schedule, trains CartPole through
the same run folder as PPO, resumes with its replay buffer, and refuses an SB3-era checkpoint with a
sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from shared_util import sb3_era_checkpoint, stop_after

from gymnasium_solver.agents.dqn import DQN, Explorer, QNetwork, ReplayBuffer, Sample
from gymnasium_solver.config import DQNConfig, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train.training import train


def _cfg(*overrides: str) -> DQNConfig:
    cfg = resolve_config("CartPole-v1:dqn", list(overrides))
    assert isinstance(cfg, DQNConfig)
    return cfg


def _spec(cfg: DQNConfig) -> Any:
    return space_spec(make_vec_env(cfg, 1))


@pytest.mark.parametrize("gradients", ["numpy", "autograd"])
def test_three_gradient_steps_move_the_weights_as_sb3s_dqn_train(monkeypatch: pytest.MonkeyPatch,
                                                                 gradients: str) -> None:
    """The same weights and minibatches through our gradient step and SB3's DQN.train(): TD target
    from the target network (n-step discounts, terminal mask), Huber loss, gradient clip, Adam state
    carried between steps. Ours is torch's fused Adam, SB3's the per-tensor one: equal to rounding."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    cfg = _cfg("hidden_sizes=[32, 32]", "learning_rate=0.01", "max_grad_norm=0.5", "batch_size=16")
    torch.manual_seed(0)
    ours = DQN(cfg, _spec(cfg))
    if gradients == "autograd":  # the path a policy off float32 CPU parameters takes
        monkeypatch.setattr(ours.policy, "numpy_net", lambda: None)
    assert (ours.policy.numpy_net() is None) == (gradients == "autograd")
    theirs = sb3.DQN("MlpPolicy", "CartPole-v1", learning_rate=0.01, max_grad_norm=0.5, batch_size=16,
                     device="cpu", policy_kwargs={"net_arch": [32, 32]})
    theirs.set_logger(Logger(folder=None, output_formats=[]))  # configure(None, ...) leaves a /tmp/SB3-* folder
    with torch.no_grad():
        for net, sb3_net in ((ours.policy, theirs.q_net), (ours.target, theirs.q_net_target)):
            for p, q in zip(net.parameters(), sb3_net.parameters(), strict=True):
                q.copy_(p + 0.01 * torch.randn_like(p) if net is ours.target else p)
    ours.target.load_state_dict({k: v.clone() for k, v in theirs.q_net_target.state_dict().items()})
    gen = torch.Generator().manual_seed(1)
    for _ in range(3):
        b = Sample(torch.randn(16, 4, generator=gen), torch.randint(0, 2, (16,), generator=gen),
                   torch.randn(16, generator=gen), torch.randn(16, 4, generator=gen),
                   (torch.rand(16, generator=gen) < 0.3).float(), torch.full((16,), 0.99**3))
        theirs_b = ReplayBufferSamples(b.obs, b.actions[:, None], b.next_obs, b.terminated[:, None],
                                       b.returns[:, None], b.discounts[:, None])
        monkeypatch.setattr(ours.buffer, "sample", lambda *_, b=b: b)
        monkeypatch.setattr(ours.buffer, "sample_arrays", lambda *_, b=b: tuple(t.numpy() for t in b))
        monkeypatch.setattr(theirs.replay_buffer, "sample", lambda *_, b=theirs_b, **__: b)
        ours._gradient_step()
        theirs.train(gradient_steps=1, batch_size=16)
    for p, q in zip(ours.policy.parameters(), theirs.q_net.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-5), (p - q).abs().max()
    assert ours.n_updates == theirs._n_updates == 3


@pytest.mark.parametrize("gradients", ["numpy", "autograd"])
def test_double_q_values_the_online_networks_pick_with_the_target_network(monkeypatch: pytest.MonkeyPatch,
                                                                         gradients: str) -> None:
    """With double_q the TD target is r + (1 - terminated) * discount * Q_target(s', argmax_a Q(s', a)) (van Hasselt
    et al. 2016), on both gradient paths; it is not the max of the target network's values (which the test checks
    differ here, so a step that ignored double_q would fail)."""
    cfg = _cfg("hidden_sizes=[32, 32]", "batch_size=64", "double_q=true")
    torch.manual_seed(0)
    ours = DQN(cfg, _spec(cfg))
    if gradients == "autograd":
        monkeypatch.setattr(ours.policy, "numpy_net", lambda: None)
    with torch.no_grad():  # a target network unlike the online one, so the two targets differ
        for p in ours.target.parameters():
            p.add_(0.5 * torch.randn_like(p))
    ours.target._np_cache = None
    gen = torch.Generator().manual_seed(1)
    b = Sample(torch.randn(64, 4, generator=gen), torch.randint(0, 2, (64,), generator=gen),
               torch.randn(64, generator=gen), torch.randn(64, 4, generator=gen),
               (torch.rand(64, generator=gen) < 0.3).float(), torch.full((64,), 0.99**3))
    monkeypatch.setattr(ours.buffer, "sample", lambda *_: b)
    monkeypatch.setattr(ours.buffer, "sample_arrays", lambda *_: tuple(t.numpy() for t in b))
    with torch.no_grad():
        q = ours.policy(b.obs).gather(1, b.actions[:, None]).squeeze(1)
        target_q = ours.target(b.next_obs)
        double = target_q.gather(1, ours.policy(b.next_obs).argmax(1, keepdim=True)).squeeze(1)
        losses = {name: float(torch.nn.functional.smooth_l1_loss(q, b.returns + (1 - b.terminated) * b.discounts * v))
                  for name, v in (("double", double), ("max", target_q.max(1).values))}
    assert abs(losses["double"] - losses["max"]) > 1e-3
    ours._gradient_step()
    assert ours._losses[-1] == pytest.approx(losses["double"], rel=1e-5)


def _store(buffer: ReplayBuffer, rewards: list[float], end: str) -> None:
    """One env: observations 0, 1, 2, ... (as a 1-d vector), action = step index, then the episode ends."""
    for t, r in enumerate(rewards):
        last = t == len(rewards) - 1
        buffer.add(np.array([[float(t)]], np.float32), np.array([t % 2]), np.array([r], np.float32),
                   np.array([last and end == "terminated"]), np.array([last and end == "truncated"]),
                   np.array([[float(t + 1)]], np.float32), np.array([True]))


@pytest.mark.parametrize("end", ["terminated", "truncated"])
def test_n_step_returns_are_summed_and_cut_at_the_episode_end(end: str) -> None:
    """n = 3, gamma 0.5, rewards 1, 2, 3, 4: each stored transition holds up to 3 discounted rewards, the
    observation it bootstraps from, gamma^k for its k rewards, and whether the episode terminated."""
    buffer = ReplayBuffer(100, 1, 1, n_steps=3, gamma=0.5)
    _store(buffer, [1.0, 2.0, 3.0, 4.0], end)
    assert buffer.size == 4
    assert buffer.obs[:4, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert buffer.returns[:4].tolist() == [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3 + 0.25 * 4, 3 + 0.5 * 4, 4.0]
    assert buffer.next_obs[:4, 0].tolist() == [3.0, 4.0, 4.0, 4.0]
    assert buffer.discounts[:4].tolist() == [0.125, 0.125, 0.25, 0.5]
    ended = 1.0 if end == "terminated" else 0.0  # a truncated episode still bootstraps from its last observation
    assert buffer.terminated[:4].tolist() == [0.0, ended, ended, ended]


def test_one_step_transitions_skip_reset_steps_and_wrap_around() -> None:
    buffer = ReplayBuffer(3, 1, 2, n_steps=1, gamma=0.9)
    for t in range(4):
        buffer.add(np.full((2, 1), t, np.float32), np.array([0, 1]), np.array([1.0, 2.0], np.float32),
                   np.array([False, False]), np.array([False, False]), np.full((2, 1), t + 1, np.float32),
                   np.array([True, t != 1]))  # env 1's step 1 is a reset step: not a transition
    assert buffer.size == 3 and buffer.pos == (4 * 2 - 1) % 3
    assert sorted(buffer.obs[:, 0].tolist()) == [2.0, 3.0, 3.0]  # the newest three of seven
    assert np.allclose(buffer.discounts, 0.9)


def test_exploration_is_random_before_learning_starts_then_decays_linearly() -> None:
    cfg = _cfg("max_env_steps=1000", "learning_starts=100", "exploration_fraction=0.5",
               "exploration_initial_eps=1.0", "exploration_final_eps=0.1")
    explorer = Explorer(QNetwork(_spec(cfg), cfg), cfg)
    assert explorer.epsilon_at(0) == 1.0 and explorer.epsilon_at(250) == pytest.approx(0.55)
    assert explorer.epsilon_at(500) == explorer.epsilon_at(900) == pytest.approx(0.1)
    rng = np.random.default_rng(0)
    obs = np.zeros((1000, 4), np.float32)
    greedy = explorer.q.act(obs, None).actions[0]
    explorer.env_steps = 0
    assert 400 < int((explorer.act(obs, rng).actions != greedy).sum()) < 600  # uniform: half differ
    explorer.env_steps, explorer.epsilon = 600, 0.1
    assert int((explorer.act(obs, rng).actions != greedy).sum()) < 100  # 5% expected


def test_the_target_moves_once_per_interval_of_vector_steps() -> None:
    """SB3 moves the target every target_update_interval // n_envs env.step() calls; k moves of tau
    during one collection (the online net fixed) equal one move by 1 - (1 - tau)^k."""
    cfg = _cfg("n_envs=4", "target_update_interval=40", "tau=0.5")
    agent = DQN(cfg, _spec(cfg))
    with torch.no_grad():
        for p in agent.target.parameters():
            p.zero_()
    online = [w.clone() for w in agent.policy.parameters()]
    agent._update_target(9)  # every 10 vector steps: not yet
    assert all(bool((t == 0).all()) for t in agent.target.parameters())
    agent._update_target(21)  # vector steps 10, 20, 30: three moves of 0.5
    for t, w in zip(agent.target.parameters(), online, strict=True):
        assert torch.allclose(t, 0.875 * w)


@pytest.mark.slow
def test_dqn_solves_cartpole_and_writes_the_run_folder(tmp_path: Path) -> None:
    result = train(resolve_config("CartPole-v1:dqn", ["seed=0"]), tmp_path)
    assert result.solved and result.stop_reason == rf.StopReason.SOLVED, result.best_eval
    info = rf.read_run_info(result.run_dir)
    assert info.algo == "dqn" and info.metric_columns == list(rf.columns_for("dqn")) and not info.warnings
    table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    for metric in (rf.M.TD_LOSS, rf.M.GRAD_NORM, rf.M.Q_MEAN, rf.M.EXPLORATION_RATE, rf.M.LEARNING_RATE):
        values = table.column(metric)[1:]  # the first iteration ends as the gradient steps begin
        assert all(v is not None and np.isfinite(v) for v in values), metric
    updates = [v or 0.0 for v in table.column(rf.M.N_UPDATES)]
    assert updates == sorted(updates) and updates[-1] > 0
    # A completed run is never resumed: its last checkpoint holds the weights, not the replay buffer.
    from gymnasium_solver.train.checkpoints import load_resume_state

    with pytest.raises(ValueError, match="holds no training state .* the last one of a completed run"):
        load_resume_state(result.run_dir / rf.CHECKPOINTS_DIR / "last.pt")
    assert (result.run_dir / rf.CHECKPOINTS_DIR / "last.pt").stat().st_size < 100_000


def test_a_stopped_dqn_run_resumes_with_its_replay_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DQN is ours now, so a stopped run resumes (SB3's could not): Adam, target network, replay buffer,
    sampling RNG and counters come back; metrics continue after the checkpoint's iteration."""
    from gymnasium_solver.train import training
    from gymnasium_solver.train.checkpoints import load_resume_state

    cfg = resolve_config("CartPole-v1:dqn", ["max_env_steps=3000", "iteration_steps=500", "eval_freq=1500",
                                             "eval_episodes=2", "learning_starts=200", "train_freq=4",
                                             "gradient_steps=2", "reward_threshold=1000", "last_checkpoint_seconds=0"])
    monkeypatch.setattr(training, "stop_on_signals", lambda: stop_after(3))
    stopped = training.train(cfg, tmp_path)
    monkeypatch.undo()
    assert stopped.status == rf.RunStatus.STOPPED and stopped.env_steps == 3 * 512
    saved = load_resume_state(stopped.run_dir / rf.CHECKPOINTS_DIR / "last.pt").training.optimizer
    # 1,536 env steps, less the reset steps and the n-step returns not yet complete
    assert saved["buffer"]["obs"].shape == (saved["buffer"]["size"], 4) and saved["buffer"]["size"] > 1300
    assert saved["vector_steps"] == 3 * 512 // 4
    resumed = training.resume(stopped.run_dir)
    assert resumed.status == rf.RunStatus.COMPLETED and resumed.env_steps >= 3000
    table = rf.parse_metrics_text((resumed.run_dir / rf.METRICS_CSV).read_text())
    iterations = [int(v or 0) for v in table.column(rf.M.ITERATION)]
    assert iterations == list(range(1, len(iterations) + 1))
    replay_fill = [v or 0.0 for v in table.column(rf.M.REPLAY_FILL)]
    assert replay_fill == sorted(replay_fill)  # the buffer came back: it never restarts empty
    assert rf.read_run_info(resumed.run_dir).resumes[0].at_env_steps == 3 * 512


def test_a_checkpoint_of_the_sb3_era_dqn_is_refused_with_a_sentence(tmp_path: Path) -> None:
    """Before 2026-11-27 dqn was SB3's: its checkpoints hold SB3's .zip."""
    from gymnasium_solver.train.checkpoints import load_checkpoint

    path = sb3_era_checkpoint(tmp_path, "env_id: CartPole-v1\nvariant: dqn\nalgo: dqn\n")
    with pytest.raises(ValueError, match="is a Stable-Baselines3 DQN model, written before dqn became our own agent"):
        load_checkpoint(path, _spec(_cfg()))


def test_dqn_refuses_box_actions_with_a_sentence(tmp_path: Path) -> None:
    cfg = _cfg("max_env_steps=200").model_copy(update={"env_id": "Pendulum-v1"})
    result = train(cfg, tmp_path)
    assert result.status == rf.RunStatus.FAILED and result.failure is not None
    assert "dqn needs discrete actions, but Pendulum-v1 has continuous (Box) actions" in result.failure.message
