"""bench/bench_presets_vs_zoo.py compares each preset with SB3's own algorithm of the same kind, built
from the RL Zoo's entry for the env as the Zoo trains it. No training here."""

from __future__ import annotations

from types import ModuleType

import pytest
from shared_util import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_presets_vs_zoo")


@pytest.mark.parametrize(("config_id", "algo"), [("CartPole-v1:dqn", "dqn"), ("CartPole-v1:a2c", "a2c"),
                                                  ("Acrobot-v1:ppo", "ppo"), ("CartPole-v1:reinforce", "ppo")])
def test_each_preset_meets_sb3s_algorithm_of_its_kind(bench: ModuleType, config_id: str, algo: str) -> None:
    assert bench.zoo_algo(config_id) == algo


@pytest.mark.parametrize("env_id", ["CartPole-v1", "LunarLander-v3"])
def test_the_dqn_zoo_arm_is_sb3s_dqn_with_every_key_of_the_zoos_entry(bench: ModuleType, env_id: str) -> None:
    pytest.importorskip("rl_zoo3")
    sb3 = pytest.importorskip("stable_baselines3")
    entry = bench.zoo_entry(f"{env_id}:dqn", env_id)
    kwargs = bench.sb3_kwargs("dqn", entry)
    assert set(entry) - bench.HANDLED <= set(kwargs)  # nothing of the entry is dropped
    model = sb3.DQN(entry["policy"], env_id, device="cpu", **kwargs)
    for key in ("batch_size", "learning_starts", "gamma", "target_update_interval", "exploration_fraction",
                "exploration_final_eps"):
        assert getattr(model, key) == entry[key], key
    assert model.gradient_steps == entry["gradient_steps"] and model.train_freq.frequency == entry["train_freq"]
    assert model.policy.net_arch == [256, 256]  # the Zoo's policy_kwargs, evaluated


def test_sac_presets_are_refused_with_the_bench_that_takes_them(bench: ModuleType) -> None:
    with pytest.raises(SystemExit, match="bench_sb3_presets.py compares sac and td3"):
        bench.zoo_algo("Pendulum-v1:sac")


def test_the_sb3_arm_leaves_no_logger_folder_behind(bench: ModuleType, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """SB3's learn() at verbose=0 makes an empty SB3-<date> folder in the temp dir for its logger, one per run:
    a bench of 20 seeds left 20. The arm gives its model a logger without a folder."""
    import tempfile

    pytest.importorskip("stable_baselines3")
    from gymnasium_solver.config import resolve_config

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ours = resolve_config("CartPole-v1:ppo", ["eval_freq=128", "eval_episodes=2"])
    row = bench.run_sb3(ours, "ppo", {"n_timesteps": 256, "policy": "MlpPolicy", "n_steps": 64}, 0)
    assert row["env_steps"] >= 128
    assert not list(tmp_path.glob("SB3-*"))
