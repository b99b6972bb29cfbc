"""Every environment preset resolves and names its goal; PPO solves Pendulum-v1 and Acrobot-v1.

The learning tests use seeds whose solve was measured (docs/presets.md); the presets solve for the
other seeds tried too. LunarLander-v3 is left out to keep the suite inside its 10-minute budget
(10-16 s per run here, more on a busy machine); its measured results are in docs/presets.md.
"""

from pathlib import Path

import pytest

from gymnasium_solver.cli.train import evaluate_checkpoint
from gymnasium_solver.config import (
    CONFIG_DIR_ENV,
    PACKAGE_CONFIG_DIR,
    list_variants,
    load_preset,
    resolve_config,
    spec_reward_threshold,
)
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env
from gymnasium_solver.train.training import TrainResult, train

PRESET_FILES = sorted(PACKAGE_CONFIG_DIR.glob("*.yaml"))


@pytest.fixture
def package_presets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read the shipped presets even if the environment points GSOLVE_CONFIG_DIR elsewhere."""
    monkeypatch.delenv(CONFIG_DIR_ENV, raising=False)


def test_the_required_presets_exist() -> None:
    names = {p.stem for p in PRESET_FILES}
    assert {"CartPole-v1", "Acrobot-v1", "LunarLander-v3", "Pendulum-v1"} <= names, names


@pytest.mark.usefixtures("package_presets")
@pytest.mark.parametrize("path", PRESET_FILES, ids=lambda p: p.stem)
def test_every_preset_variant_resolves_with_a_threshold(path: Path) -> None:
    env_id = path.stem
    preset = load_preset(env_id)
    assert preset.description.strip(), f"{path} needs a top-level description saying what solving means"
    variants = list_variants(env_id)
    assert variants, f"{path} has no variants"
    for variant, algo in variants.items():
        cfg = resolve_config(f"{env_id}:{variant}")
        assert (cfg.env_id, cfg.variant, cfg.algo) == (env_id, variant, algo)
        assert cfg.reward_threshold is not None, (
            f"{env_id}:{variant} has no reward threshold (the Gymnasium spec has none; set reward_threshold)"
        )
        spec_threshold = spec_reward_threshold(env_id)
        if spec_threshold is not None:
            # "solved" means what Gymnasium means by it wherever Gymnasium defines it
            assert cfg.reward_threshold == spec_threshold, (env_id, variant, cfg.reward_threshold)
        assert cfg.eval_freq <= cfg.max_env_steps
        # the environment exists with these env_kwargs, and the trainer supports its spaces
        make_vec_env(cfg, 1).close()


@pytest.mark.usefixtures("package_presets")
def test_pendulum_threshold_is_the_presets_own() -> None:
    # Gymnasium gives Pendulum no threshold, so the preset must: -200 over 50 episodes (see its description).
    assert spec_reward_threshold("Pendulum-v1") is None
    cfg = resolve_config("Pendulum-v1:ppo")
    assert (cfg.reward_threshold, cfg.eval_episodes) == (-200.0, 50)


def _assert_solved(result: TrainResult, threshold: float) -> rf.SolvedAt:
    assert result.solved and result.stop_reason == rf.StopReason.SOLVED, (result.stop_reason, result.best_eval)
    solved_at = result.solved_at
    assert solved_at is not None and solved_at.eval_return_mean >= threshold
    info = rf.read_run_info(result.run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.solved_at == solved_at
    return solved_at


@pytest.mark.slow
@pytest.mark.usefixtures("package_presets")
def test_ppo_solves_pendulum(tmp_path: Path) -> None:
    cfg = resolve_config("Pendulum-v1:ppo", ["seed=1"])
    result = train(cfg, tmp_path)
    solved_at = _assert_solved(result, -200.0)
    # Measured: 8,192 for this seed, 8,192-12,288 for seeds 0-5 (gSDE); the RL Zoo's PPO needs a
    # median of ~25-33k (bench/bench_presets_vs_zoo.py), the preset before gSDE 98k-172k.
    assert solved_at.env_steps <= 32_768
    # The solving policy also does well from 100 fresh starts, not just on the 50 it was judged
    # on. A policy that never holds the pendulum upright scores about -550.
    best = result.run_dir / rf.CHECKPOINTS_DIR / f"{rf.BEST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}"
    fresh = evaluate_checkpoint(best, episodes=100, seed=12_345)
    assert fresh.result.return_mean >= -300, fresh.result


@pytest.mark.slow
@pytest.mark.usefixtures("package_presets")
def test_ppo_solves_acrobot(tmp_path: Path) -> None:
    cfg = resolve_config("Acrobot-v1:ppo", ["seed=0"])
    solved_at = _assert_solved(train(cfg, tmp_path), -100.0)
    # Measured: 12,288 for this seed (and seeds 1 and 2); the preset before the sweep took 36,864.
    assert solved_at.env_steps <= 40_960
