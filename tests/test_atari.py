"""The Atari preset end to end on a tiny budget: pixels stay uint8 from the env to the network, the
run folder is the usual one, `gsolve eval` plays full games from its checkpoint, and the readers
(run store, diagnosis, MCP) take the run like any other. Plus the config checks that go with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import torch

from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer, make_batch, resolve_device
from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train.rollout import RolloutCollector
from gymnasium_solver.train.training import TrainResult, train

PONG = "PongNoFrameskip-v4:ppo"
# A few thousand env steps: 2 iterations of 4 envs x 256 steps, one epoch; only the final evaluation
# (one full game; an untrained policy loses 0-21 in ~760 steps).
TINY = ["n_envs=4", "n_steps=256", "batch_size=512", "n_epochs=1", "max_env_steps=2048", "eval_episodes=1",
        "eval_freq=1000000", "checkpoint_freq=0", "device=cpu"]


class PongRun(NamedTuple):
    runs_dir: Path
    result: TrainResult


@pytest.fixture(scope="module")
def pong_run(tmp_path_factory: pytest.TempPathFactory) -> PongRun:
    runs_dir = tmp_path_factory.mktemp("atari")
    return PongRun(runs_dir, train(resolve_config(PONG, TINY), runs_dir))


def test_pong_trains_and_writes_the_usual_run_folder(pong_run: PongRun) -> None:
    run_dir = pong_run.result.run_dir
    info = rf.read_run_info(run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.stop_reason == rf.StopReason.BUDGET_EXHAUSTED, info.failure
    assert info.observation_shape == [4, 84, 84] and info.device == "cpu"
    assert info.action_space is not None and (info.action_space.kind, info.action_space.n) == ("discrete", 6)
    # The final evaluation played one full game with unclipped scores (21 points end it).
    assert info.last_eval is not None and info.last_eval.return_mean in range(-21, 22)
    assert "nature_cnn on cpu (device: cpu)" in (run_dir / rf.RUN_LOG).read_text()
    table = rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text())
    assert table.column(rf.M.ENV_STEPS) == [1024, 2048]
    assert all(v is not None and np.isfinite(v) for v in table.column(rf.M.POLICY_LOSS))
    assert table.column(rf.M.EVAL_EP_LEN_MEAN)[-1] > 700  # a whole game, not a clipped episode
    assert {m.name for m in rf.read_checkpoint_metas(run_dir)} == {"best", "last"}


def test_gsolve_eval_plays_full_games_from_the_checkpoint(pong_run: PongRun, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["eval", pong_run.result.run_id, "--runs-dir", str(pong_run.runs_dir), "--episodes", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 episode" in out


@pytest.mark.anyio
async def test_mcp_tools_and_the_diagnosis_read_the_atari_run(pong_run: PongRun) -> None:
    from mcp import Client

    from mcp_server.server import create_server

    async with Client(create_server(pong_run.runs_dir)) as client:
        for tool, extra in (("get_run_info", {}), ("get_run_info", {"view": "checkpoints"}), ("diagnose_run", {})):
            res = await client.call_tool(tool, {"run_id": pong_run.result.run_id, **extra})
            assert not res.is_error and res.structured_content, (tool, res.content)
        listed = await client.call_tool("list_runs", {})
        assert pong_run.result.run_id in json.dumps(listed.structured_content)


def test_pixels_stay_uint8_in_the_rollout_until_the_network() -> None:
    cfg = resolve_config(PONG, TINY)
    env = make_vec_env(cfg, 2)
    try:
        spec = space_spec(env)
        assert spec.pixels and spec.observation_shape == (4, 84, 84)
        collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, seed=0)
        policy = ActorCritic(spec, cfg)
        rollout = collector.collect_steps(policy, 16)
        assert rollout.obs.dtype == np.uint8 and rollout.obs.shape == (16, 2, 4, 84, 84)
        assert rollout.last_obs.dtype == np.uint8 and rollout.last_obs.shape == (2, 4, 84, 84)
        assert rollout.obs[-1].max() > 0  # real frames, not zeros
        scores = policy.score_rollout(rollout.obs, rollout.actions, rollout.last_obs)
        assert scores.values.shape == (16, 2) and np.isfinite(scores.log_probs).all()
        batch = make_batch(rollout.obs, rollout.actions, scores.log_probs, scores.values, scores.values,
                           scores.values, np.ones((16, 2), bool), with_critic=True)
        assert batch.obs.dtype == torch.uint8 and tuple(batch.obs.shape) == (32, 4, 84, 84)
    finally:
        env.close()


def test_reward_clip_clips_what_is_learned_not_the_episode_returns() -> None:
    cfg = resolve_config("CartPole-v1:ppo", ["n_envs=2", "batch_size=64", "reward_clip=0.5"])
    env = make_vec_env(cfg, 2)
    try:
        spec = space_spec(env)
        collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 3.0, 0, cfg.reward_clip)
        rollout = collector.collect_steps(ActorCritic(spec, cfg), 200)
        assert set(np.unique(rollout.rewards[rollout.valid])) == {0.5}  # 1 * 3, clipped to 0.5
        summary = collector.summary()
        assert summary.return_mean is not None and summary.return_mean == summary.len_mean  # CartPole: 1 per step
    finally:
        env.close()


def test_the_nature_cnn_matches_sb3_and_cleanrl() -> None:
    cfg = resolve_config(PONG, ["device=cpu"])
    from gymnasium_solver.envs import SpaceSpec

    spec = SpaceSpec(4 * 84 * 84, (4, 84, 84), True, 6, None, None, pixels=True)
    policy = ActorCritic(spec, cfg)
    convs = [m for m in policy.actor_body if isinstance(m, torch.nn.Conv2d)]
    assert [(c.out_channels, c.kernel_size, c.stride) for c in convs] == [
        (32, (8, 8), (4, 4)), (64, (4, 4), (2, 2)), (64, (3, 3), (1, 1))]
    # NatureCNN(512) (1,684,128) + actor head for 6 actions (3,078) + value head (513): SB3's count for Pong.
    assert sum(p.numel() for p in policy.parameters()) == 1_687_719
    assert policy.critic_body is None  # one trunk for actor and critic


@pytest.mark.parametrize(("override", "message"), [
    (["network=mlp"], "atari_wrappers: true gives 4x84x84 uint8 pixel observations; set network: nature_cnn"),
    (["normalize_observations=true"], "set normalize_observations: false"),
    (["device=gpu"], "device"),
])
def test_atari_config_errors_are_sentences(override: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        resolve_config(PONG, override)


def test_cuda_needs_the_cnn_and_auto_falls_back_to_the_cpu() -> None:
    with pytest.raises(ConfigError, match="device: cuda needs network: nature_cnn"):
        resolve_config("CartPole-v1:ppo", ["device=cuda"])
    auto = resolve_config(PONG, ["device=auto"])
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device(auto).type == expected
    assert resolve_device(resolve_config("CartPole-v1:ppo", ["device=auto"])).type == "cpu"


def test_a_pixel_env_for_the_mlp_and_the_cnn_for_flat_obs_are_refused() -> None:
    with pytest.raises(ValueError, match="nature_cnn needs 4x84x84 uint8 frame stacks"):
        make_vec_env(resolve_config("CartPole-v1:ppo", ["network=nature_cnn"]), 1)


def test_atari_wrappers_on_a_game_that_is_not_atari_is_refused() -> None:
    cfg = resolve_config("CartPole-v1:ppo", ["atari_wrappers=true", "network=nature_cnn"])
    with pytest.raises(ValueError, match="needs an ALE game such as PongNoFrameskip-v4; 'CartPole-v1' is not one"):
        make_vec_env(cfg, 1)


def test_without_ale_py_the_preset_says_which_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ale_py", None)  # import ale_py now raises ImportError
    with pytest.raises(ValueError, match=r"pip install \"gymnasium-solver\[atari\]\""):
        make_vec_env(resolve_config(PONG, ["device=cpu"]), 1)


def _wrapper_types(env: object) -> list[type]:
    types = []
    while env is not None:
        types.append(type(env))
        env = getattr(env, "env", None)
    return types


def test_fire_starts_every_life_so_a_policy_that_never_fires_still_ends_its_game() -> None:
    """Breakout waits for FIRE at the start of every life: a policy that never presses it (an untrained or a
    deterministic one) stood still until the ALE truncated the game at 27,000 env steps, so one evaluation game
    took minutes. With FIRE pressed after reset and after each lost life, NOOP loses its 5 lives in a few hundred."""
    import gymnasium as gym

    from gymnasium_solver.envs import FireAtLifeStart, atari_wrappers, register_atari

    register_atari()
    env = atari_wrappers(gym.make("BreakoutNoFrameskip-v4"))
    env.reset(seed=0)
    lives, rewards, steps, ended = [env.unwrapped.ale.lives()], 0.0, 0, False
    while not ended and steps < 5_000:
        _, reward, terminated, truncated, info = env.step(0)  # NOOP, always
        steps, rewards, ended = steps + 1, rewards + float(reward), terminated or truncated
        lives.append(info["lives"])
    env.close()
    assert terminated and not truncated and steps < 5_000, steps
    assert lives[0] == 5 and lives[-1] == 0 and sorted(set(lives), reverse=True) == [5, 4, 3, 2, 1, 0]
    assert FireAtLifeStart in _wrapper_types(env)
    # A game whose action 1 is not FIRE (Freeway: NOOP, UP, DOWN) is left as it is.
    freeway = atari_wrappers(gym.make("FreewayNoFrameskip-v4"))
    assert FireAtLifeStart not in _wrapper_types(freeway)
    freeway.close()
