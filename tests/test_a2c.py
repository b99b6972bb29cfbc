"""Our A2C (gymnasium_solver/agents/a2c.py) makes Stable-Baselines3's A2C update, trains CartPole through the same run
folder as PPO, resumes, and refuses the SB3-era key with a sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from shared_util import sb3_era_checkpoint, stop_after

from gymnasium_solver.agents.a2c import A2C
from gymnasium_solver.agents.common import ObsNormalizer
from gymnasium_solver.config import ConfigError, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train.rollout import RolloutCollector
from gymnasium_solver.train.training import train

# Our parameter names -> SB3's ActorCriticPolicy's, for separate 2-layer actor and critic MLPs.
SB3_NAMES = {"actor_body.0": "mlp_extractor.policy_net.0", "actor_body.2": "mlp_extractor.policy_net.2",
             "critic_body.0": "mlp_extractor.value_net.0", "critic_body.2": "mlp_extractor.value_net.2",
             "actor_head": "action_net", "value_head": "value_net"}


def _sb3_name(ours: str) -> str:
    layer, kind = ours.rsplit(".", 1)
    return f"{SB3_NAMES[layer]}.{kind}"


@pytest.mark.parametrize("normalize", [False, True])
def test_three_updates_move_the_weights_exactly_as_sb3s_a2c_train(normalize: bool) -> None:
    """The same weights and rollouts through our update and SB3's A2C.train(): the same RMSprop steps
    (loss terms, coefficients, gradient clip, optimizer state carried between updates)."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.buffers import RolloutBuffer
    from stable_baselines3.common.logger import Logger

    cfg = resolve_config("CartPole-v1:a2c", ["n_envs=4", "n_steps=8", "ent_coef=0.02", "vf_coef=0.7",
                                             "max_grad_norm=0.3", f"normalize_advantages={str(normalize).lower()}"])
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    torch.manual_seed(0)
    ours = A2C(cfg, spec)
    theirs = sb3.A2C("MlpPolicy", "CartPole-v1", n_steps=8, learning_rate=cfg.learning_rate, ent_coef=0.02,
                     vf_coef=0.7, max_grad_norm=0.3, normalize_advantage=normalize, device="cpu",
                     policy_kwargs={"net_arch": [64, 64]})
    theirs.set_logger(Logger(folder=None, output_formats=[]))  # configure(None, ...) leaves a /tmp/SB3-* folder
    sb3_params = dict(theirs.policy.named_parameters())
    with torch.no_grad():
        for name, p in ours.policy.named_parameters():
            sb3_params[_sb3_name(name)].copy_(p)
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, seed=3)
    for _ in range(3):
        batch = ours.targets(ours.collect(collector))
        n = batch.obs.shape[0]
        buffer = RolloutBuffer(n, theirs.observation_space, theirs.action_space, device="cpu", n_envs=1)
        buffer.observations[:] = batch.obs.numpy()[:, None]
        buffer.actions[:] = batch.actions.numpy().reshape(n, 1, 1)
        buffer.values[:] = batch.values.numpy()[:, None]
        buffer.log_probs[:] = batch.log_probs.numpy()[:, None]
        buffer.advantages[:] = batch.advantages.numpy()[:, None]
        buffer.returns[:] = batch.returns.numpy()[:, None]
        buffer.full = True
        theirs.rollout_buffer = buffer
        theirs.train()
        stats = ours.update(batch, 0.0)
        assert stats.policy_loss is not None and stats.entropy is not None
    for name, p in ours.policy.named_parameters():
        assert torch.allclose(p, sb3_params[_sb3_name(name)], atol=1e-6), name
    assert not torch.allclose(ours.policy.actor_head.weight, torch.zeros(()))


@pytest.mark.slow
def test_a2c_solves_cartpole_and_writes_the_run_folder(tmp_path: Path) -> None:
    result = train(resolve_config("CartPole-v1:a2c", ["seed=0"]), tmp_path)
    assert result.solved and result.stop_reason == rf.StopReason.SOLVED, result.best_eval
    info = rf.read_run_info(result.run_dir)
    assert info.algo == "a2c" and info.metric_columns == list(rf.columns_for("a2c"))
    table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    for metric in (rf.M.POLICY_LOSS, rf.M.VALUE_LOSS, rf.M.ENTROPY, rf.M.GRAD_NORM, rf.M.EXPLAINED_VARIANCE):
        assert all(v is not None and np.isfinite(v) for v in table.column(metric)), metric
    # one update per rollout of the preset's 4 envs x 8 steps
    assert table.column(rf.M.ENV_STEPS)[:2] == [32, 64]


def test_the_sb3_era_iteration_steps_key_is_a_sentence() -> None:
    """A config written for the SB3-trained A2C (one metrics row per iteration_steps) names the key to drop:
    ours writes a row per rollout."""
    with pytest.raises(ConfigError, match="'iteration_steps' is a dqn or .* key; an a2c config has no 'iteration_steps' "
                                          r"\(remove it"):
        resolve_config("CartPole-v1:a2c", ["iteration_steps=2000"])


def test_a_stopped_a2c_run_resumes_to_its_budget_with_its_rmsprop_state(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A2C is ours now, so a stopped A2C run resumes (SB3's could not): optimizer state, RNGs and counters."""
    from gymnasium_solver.train import training

    # 128 env steps per update (4 envs x 32 steps), whatever the preset's rollout: 16 updates in the budget
    cfg = resolve_config("CartPole-v1:a2c", ["max_env_steps=2048", "eval_freq=1024", "eval_episodes=2", "n_envs=4",
                                             "n_steps=32", "reward_threshold=1000", "last_checkpoint_seconds=0"])
    monkeypatch.setattr(training, "stop_on_signals", lambda: stop_after(3))
    stopped = training.train(cfg, tmp_path)
    monkeypatch.undo()
    assert stopped.status == rf.RunStatus.STOPPED and stopped.env_steps == 3 * 128
    resumed = training.resume(stopped.run_dir)
    assert resumed.status == rf.RunStatus.COMPLETED and resumed.env_steps == 2048
    table = rf.parse_metrics_text((resumed.run_dir / rf.METRICS_CSV).read_text())
    assert [int(v) for v in table.column(rf.M.ITERATION)] == list(range(1, 17))
    assert rf.read_run_info(resumed.run_dir).resumes[0].at_env_steps == 384


def test_a_checkpoint_of_the_sb3_era_a2c_is_refused_with_a_sentence(tmp_path: Path) -> None:
    """Before 2026-11-26 a2c was SB3's: its checkpoints hold SB3's .zip and a config with iteration_steps."""
    from gymnasium_solver.train.checkpoints import load_checkpoint

    path = sb3_era_checkpoint(tmp_path, "env_id: CartPole-v1\nvariant: a2c\nalgo: a2c\niteration_steps: 2000\n")
    spec = space_spec(make_vec_env(resolve_config("CartPole-v1:a2c", []), 1))
    with pytest.raises(ValueError, match="is a Stable-Baselines3 A2C model, written before a2c became our own agent"):
        load_checkpoint(path, spec)
