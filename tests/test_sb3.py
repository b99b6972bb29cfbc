"""Stable-Baselines3 algorithms trained by our loop (gymnasium_solver/agents/sb3.py, training_sb3.py): the run folder is
the same contract every reader reads (show, MCP get_run_metrics and diagnose_run, gsolve eval), stop
signals and failures end as data, and a bad SB3 key or an impossible resume is a sentence."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.resume import plan_resume
from gymnasium_solver.train.training import train
from mcp_server.server import create_server

UNSOLVABLE = "reward_threshold=1000000"
# A few hundred steps with gradient steps from the start, on a tiny network.
TINY = ["n_envs=1", "max_env_steps=600", "eval_freq=300", "iteration_steps=200", "learning_starts=50", "train_freq=4",
        "gradient_steps=1", "hidden_sizes=[16]", "eval_episodes=2", "batch_size=32", UNSOLVABLE]
# The SB3 algorithms smoke-tested, by the preset and overrides that train them (QR-DQN on the DQN preset:
# DQN itself is ours, tests/test_dqn.py).
SMOKE = {
    "qrdqn": ("CartPole-v1:dqn", ["algo=qrdqn"],
              [rf.M.Q_MEAN, rf.M.TD_LOSS, rf.M.EXPLORATION_RATE, rf.M.REPLAY_FILL, rf.M.N_UPDATES]),
    "sac": ("Pendulum-v1:sac", [], [rf.M.Q_MEAN, rf.M.CRITIC_LOSS, rf.M.ACTOR_LOSS, rf.M.ENT_COEF, rf.M.REPLAY_FILL]),
}


@pytest.fixture(scope="module")
def sb3_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    runs = tmp_path_factory.mktemp("sb3runs")
    return {algo: train(resolve_config(config_id, [*TINY, *extra]), runs).run_dir
            for algo, (config_id, extra, _) in SMOKE.items()}


@pytest.mark.parametrize("algo", list(SMOKE))
def test_sb3_run_writes_the_run_folder_contract(sb3_runs: dict[str, Path], algo: str) -> None:
    run_dir = sb3_runs[algo]
    info = rf.read_run_info(run_dir)
    assert info.algo == algo and info.status == rf.RunStatus.COMPLETED
    assert info.stop_reason == rf.StopReason.BUDGET_EXHAUSTED and info.progress.env_steps >= 600
    assert info.metric_columns == list(rf.columns_for(algo))
    table = rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text())
    steps = table.column(rf.M.ENV_STEPS)
    assert steps == sorted(steps) and len(steps) == 3  # 3 iterations of 200 steps
    for metric in SMOKE[algo][2]:
        values = [v for v in table.column(metric) if v is not None]
        assert values, f"{metric} never written"
    updates = table.column(rf.M.N_UPDATES)
    assert updates[-1] is not None and updates[-1] >= (600 - 50) // 4 - 1
    assert [v is not None for v in table.column(rf.M.EVAL_RETURN_MEAN)] == [False, True, True]
    metas = {m.name: m for m in rf.read_checkpoint_metas(run_dir)}
    assert {"best", "last"} <= set(metas)


@pytest.mark.parametrize("algo", list(SMOKE))
def test_show_and_eval_read_an_sb3_run(sb3_runs: dict[str, Path], algo: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = sb3_runs[algo]
    assert cli.main(["show", run_dir.name, "--runs-dir", str(run_dir.parent)]) == 0
    assert SMOKE[algo][0] in capsys.readouterr().out
    assert cli.main(["eval", run_dir.name, "--runs-dir", str(run_dir.parent), "--episodes", "2"]) == 0
    assert "over 2 episodes" in capsys.readouterr().out


@pytest.mark.anyio
@pytest.mark.parametrize("algo", list(SMOKE))
async def test_mcp_metrics_and_diagnosis_of_an_sb3_run(sb3_runs: dict[str, Path], algo: str) -> None:
    run_dir = sb3_runs[algo]
    async with Client(create_server(run_dir.parent)) as client:
        res = await client.call_tool("get_run_metrics", {"run_id": run_dir.name, "metrics": SMOKE[algo][2]})
        assert not res.is_error and res.structured_content is not None
        series = {s["metric"]: s for s in res.structured_content["curves"]["series"]}
        assert list(series) == SMOKE[algo][2] and all(s["values"] for s in series.values())
        res = await client.call_tool("diagnose_run", {"run_id": run_dir.name})
        assert not res.is_error and res.structured_content is not None
        assert res.structured_content["run_id"] == run_dir.name


def test_resume_of_an_sb3_run_is_refused_with_a_sentence(tmp_path: Path) -> None:
    run_dir = train(resolve_config("Pendulum-v1:sac", [*TINY, "max_env_steps=200"]), tmp_path).run_dir
    info = rf.read_run_info(run_dir)
    info.status, info.stop_reason, info.solved = rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED, False
    rf.write_run_info(run_dir, info)
    with pytest.raises(ValueError, match="through Stable-Baselines3.*start a new run instead"):
        plan_resume(run_dir)


def test_bad_sb3_keys_are_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="unknown key 'buffer_sise'; did you mean 'buffer_size'"):
        resolve_config("CartPole-v1:dqn", ["buffer_sise=10"])
    with pytest.raises(ConfigError, match="vf_coef is not used by dqn"):
        resolve_config("CartPole-v1:dqn", ["vf_coef=0.3"])
    with pytest.raises(ConfigError, match="'target_update_interval' is a dqn or qrdqn key; a sac config has no"):
        resolve_config("Pendulum-v1:sac", ["target_update_interval=10"])
    with pytest.raises(ConfigError, match="exploration_final_eps: must be <= 1"):
        resolve_config("CartPole-v1:dqn", ["exploration_final_eps=2"])
    assert cli.main(["train", "CartPole-v1:dqn", "--set", "buffer_sise=10", "--quiet"]) == 2
    assert "did you mean 'buffer_size'" in capsys.readouterr().err


def test_sac_on_discrete_actions_fails_with_a_sentence(tmp_path: Path) -> None:
    cfg = resolve_config("Pendulum-v1:sac", TINY).model_copy(update={"env_id": "CartPole-v1"})
    result = train(cfg, tmp_path)
    assert result.status == rf.RunStatus.FAILED and result.failure is not None
    assert "sac needs continuous (Box) actions" in result.failure.message


def test_sigterm_stops_an_sb3_run_gracefully(tmp_path: Path) -> None:
    """What `gsolve stop` and MCP stop_training send (SIGTERM to the trainer), here to this process."""
    run_id = "20261126-000000-5b3a"
    metrics = tmp_path / run_id / rf.METRICS_CSV

    def stop_once_training() -> None:
        deadline = time.monotonic() + 120
        while not (metrics.exists() and len(metrics.read_text().splitlines()) >= 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_once_training, daemon=True).start()
    result = train(resolve_config("CartPole-v1:dqn", [*TINY, "algo=qrdqn", "max_env_steps=100000000"]), tmp_path,
                   run_id=run_id)
    assert result.status == rf.RunStatus.STOPPED and result.stop_reason == rf.StopReason.USER_STOPPED
    info = rf.read_run_info(tmp_path / run_id)
    assert info.status == rf.RunStatus.STOPPED and info.last_eval is not None and info.finished_at
    assert (tmp_path / run_id / rf.CHECKPOINTS_DIR / "last.pt").is_file()


def test_n_step_returns_reach_sb3(tmp_path: Path) -> None:
    """n_steps of an off-policy config is SB3's n-step returns: the model replays n-step transitions."""
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.buffers import NStepReplayBuffer

    from gymnasium_solver.agents.sb3 import sb3_kwargs
    from gymnasium_solver.config.sb3_models import SACConfig
    from gymnasium_solver.envs import space_spec

    cfg = resolve_config("Pendulum-v1:sac", ["n_steps=3"])
    assert isinstance(cfg, SACConfig)
    spec = space_spec(gym.make_vec("Pendulum-v1", num_envs=1))
    model = SAC("MlpPolicy", "Pendulum-v1", **sb3_kwargs(cfg, spec))
    assert isinstance(model.replay_buffer, NStepReplayBuffer) and model.replay_buffer.n_steps == 3
    result = train(resolve_config("Pendulum-v1:sac", [*TINY, "n_steps=3", "max_env_steps=200"]), tmp_path)
    assert result.status == rf.RunStatus.COMPLETED
    with pytest.raises(ConfigError, match="n_steps: must be >= 1"):
        resolve_config("CartPole-v1:dqn", ["n_steps=0"])
    # The reason is DQN's n_steps', not PPO's rollout length under the same name.
    with pytest.raises(ConfigError, match=r"must be >= 1 \(1..1000: each replay sample sums up to n rewards\)"):
        resolve_config("CartPole-v1:dqn", ["n_steps=0"])
    with pytest.raises(ConfigError, match=r"must be >= 1 \(n_envs \* n_steps must also be"):
        resolve_config("CartPole-v1:ppo", ["n_steps=0"])


def test_off_policy_adam_steps_all_tensors_at_once_with_the_default_update() -> None:
    """SB3's off-policy optimizers run Adam with foreach (one pass over all tensors): faster on small
    networks, and the same arithmetic as the per-tensor default, so every seed trains as before."""
    import torch

    from gymnasium_solver.agents.sb3 import _policy_kwargs
    from gymnasium_solver.config.sb3_models import SACConfig

    cfg = resolve_config("Pendulum-v1:sac")
    assert isinstance(cfg, SACConfig)
    assert _policy_kwargs(cfg)["optimizer_kwargs"] == {"foreach": True}

    def trained(**kwargs: bool) -> torch.Tensor:
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(8, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4))
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, **kwargs)
        data = torch.Generator().manual_seed(1)
        for _ in range(50):
            loss = net(torch.randn(128, 8, generator=data)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return torch.cat([p.detach().flatten() for p in net.parameters()])

    assert torch.equal(trained(foreach=True), trained(foreach=False))


def test_mode_switches_are_skipped_only_where_no_module_depends_on_the_mode(tmp_path: Path) -> None:
    """SB3 flips train()/eval() before every gradient step and every action; on an MLP of Linear and
    activation layers nothing reads the flag, so SB3Agent skips it. A policy holding a Dropout keeps it,
    and a short TD3 run trains to the same weights either way."""
    import torch
    from stable_baselines3.common.env_util import make_vec_env as sb3_vec_env

    from gymnasium_solver.agents.sb3 import SB3Agent, skip_mode_switches
    from gymnasium_solver.config import SB3Config
    from gymnasium_solver.envs import make_vec_env, space_spec

    cfg = resolve_config("Pendulum-v1:td3", [*TINY, "seed=3"])
    assert isinstance(cfg, SB3Config)
    spec = space_spec(make_vec_env(cfg, 1))

    def weights(skip: bool) -> torch.Tensor:
        agent = SB3Agent(cfg, spec, sb3_vec_env(cfg.env_id, n_envs=1, seed=3))
        if not skip:
            del agent.model.policy.set_training_mode  # the class's own method again
        agent.model.learn(300)
        return torch.cat([p.detach().flatten() for p in agent.model.policy.parameters()])

    assert torch.equal(weights(skip=True), weights(skip=False))

    agent = SB3Agent(cfg, spec, sb3_vec_env(cfg.env_id, n_envs=1, seed=3))
    policy = agent.model.policy
    policy.set_training_mode(False)
    assert policy.training  # skipped: the flag nobody reads stays as built
    del policy.set_training_mode
    policy.actor.mu.append(torch.nn.Dropout(0.5))
    assert not skip_mode_switches(agent.model)
    policy.set_training_mode(False)
    assert not policy.actor.training


def test_a_dqn_runs_updates_are_counted_from_its_td_loss(tmp_path: Path) -> None:
    """DQN logs a TD loss, not a policy loss: its diagnosis must not say 'Only 0 update(s) recorded'."""
    from gymnasium_solver import Runs

    result = train(resolve_config("CartPole-v1:dqn", [*TINY, "max_env_steps=4000"]), tmp_path)
    notes = Runs(tmp_path).get(result.run_id).diagnose().notes
    assert not [n for n in notes if n.startswith("Only ")], notes


def test_a_short_dqn_run_counts_its_rows_as_iterations_not_updates(tmp_path: Path) -> None:
    """Two iterations of hundreds of gradient steps each are not '2 update(s)'."""
    from gymnasium_solver import Runs

    result = train(resolve_config("CartPole-v1:dqn", [*TINY, "max_env_steps=2000", "iteration_steps=1000"]), tmp_path)
    notes = Runs(tmp_path).get(result.run_id).diagnose().notes
    short = [n for n in notes if n.startswith("Only ")]
    assert len(short) == 1, notes
    found = re.fullmatch(r"Only 2 metrics row\(s\) with a loss \(one per training iteration of 1000 env steps, "
                         r"(\d+) gradient steps in all\); the trend rules need at least 8 rows\.", short[0])
    assert found and int(found.group(1)) > 400, short  # ~(2000 - 50 learning starts) / train_freq 4
