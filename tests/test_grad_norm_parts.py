"""grad_norm_parts: true logs each part's gradient norm (the brief's actor, critic and trunk), measured on the
gradients the total train/grad_norm is, and changes nothing else a run computes."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import yaml

from gymnasium_solver.config import ConfigError, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.metric_names import M
from gymnasium_solver.train import training

# Small budgets with a threshold nobody reaches: every run trains its whole budget.
SMALL = {
    "ppo": ["max_env_steps=1024", "eval_freq=1024", "n_envs=4", "n_steps=64", "batch_size=64", "n_epochs=2"],
    "a2c": ["max_env_steps=512", "eval_freq=512"],
    "reinforce": ["max_env_steps=600", "eval_freq=600", "episodes_per_update=4", "n_envs=4"],
    "dqn": ["max_env_steps=1500", "eval_freq=1500", "iteration_steps=500", "learning_starts=200"],
}
TIMING = {M.WALL_SECONDS, M.FPS, M.ROLLOUT_SECONDS, M.UPDATE_SECONDS}
PARTS = {M.GRAD_NORM_ACTOR, M.GRAD_NORM_CRITIC, M.GRAD_NORM_TRUNK, M.GRAD_NORM_HEAD}


def _rows(tmp_path: Path, algo: str, *sets: str) -> tuple[list[str], list[dict[str, str]]]:
    cfg = resolve_config(f"CartPole-v1:{algo}", [*SMALL[algo], "reward_threshold=1000000", "eval_episodes=2", *sets])
    result = training.train(cfg, tmp_path)
    with (result.run_dir / rf.METRICS_CSV).open() as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _floats(rows: list[dict[str, str]], column: str) -> list[float]:
    return [float(r[column]) for r in rows if r[column] != ""]


@pytest.mark.parametrize("algo", ["ppo", "a2c", "reinforce", "dqn"])
def test_the_part_columns_follow_the_algorithms_and_leave_every_other_figure_as_it_was(tmp_path: Path,
                                                                                      algo: str) -> None:
    plain_columns, plain = _rows(tmp_path / "plain", algo)
    columns, rows = _rows(tmp_path / "parts", algo, "grad_norm_parts=true")
    assert columns == list(rf.columns_for(algo, grad_norm_parts=True))
    assert plain_columns == list(rf.columns_for(algo)) == [c for c in columns if c not in PARTS]
    assert rows and len(rows) == len(plain)
    for row, before in zip(rows, plain, strict=True):
        assert {c: v for c, v in row.items() if c not in PARTS | TIMING} == \
               {c: v for c, v in before.items() if c not in TIMING}


def test_one_gradient_step_per_update_the_parts_add_up_to_the_total_in_squares(tmp_path: Path) -> None:
    _, rows = _rows(tmp_path, "a2c", "grad_norm_parts=true")
    assert len(rows) >= 5
    for row in rows:
        actor, critic, total = (float(row[c]) for c in (M.GRAD_NORM_ACTOR, M.GRAD_NORM_CRITIC, M.GRAD_NORM))
        assert row[M.GRAD_NORM_TRUNK] == ""  # separate MLPs share nothing
        assert actor > 0 and critic > 0
        assert math.hypot(actor, critic) == pytest.approx(total, rel=1e-5)


def test_means_over_many_gradient_steps_lie_between_the_largest_part_and_the_parts_sum(tmp_path: Path) -> None:
    _, rows = _rows(tmp_path, "dqn", "grad_norm_parts=true")
    measured = [r for r in rows if r[M.GRAD_NORM] != ""]
    assert measured
    for row in measured:
        trunk, head, total = (float(row[c]) for c in (M.GRAD_NORM_TRUNK, M.GRAD_NORM_HEAD, M.GRAD_NORM))
        assert max(trunk, head) * (1 - 1e-6) <= total <= (trunk + head) * (1 + 1e-6)


def test_a_shared_network_has_a_trunk_and_reinforce_without_a_baseline_has_no_critic(tmp_path: Path) -> None:
    _, shared = _rows(tmp_path / "shared", "ppo", "grad_norm_parts=true", "shared_network=true")
    assert all(v > 0 for v in _floats(shared, M.GRAD_NORM_TRUNK)) and _floats(shared, M.GRAD_NORM_TRUNK)
    _, alone = _rows(tmp_path / "alone", "reinforce", "grad_norm_parts=true", "use_baseline=false")
    assert _floats(alone, M.GRAD_NORM_ACTOR) and not _floats(alone, M.GRAD_NORM_CRITIC)
    for row in alone:
        assert float(row[M.GRAD_NORM_ACTOR]) == pytest.approx(float(row[M.GRAD_NORM]), rel=1e-5)


@pytest.mark.parametrize("config_id", ["Pendulum-v1:sac", "Pendulum-v1:td3"])
def test_stable_baselines3_algorithms_refuse_it_naming_the_ones_that_log_it(config_id: str) -> None:
    with pytest.raises(ConfigError) as e:
        resolve_config(config_id, ["grad_norm_parts=true"])
    assert "grad_norm_parts" in str(e.value) and "Stable-Baselines3" in str(e.value)
    assert "ppo, a2c, reinforce and dqn" in str(e.value)


def test_it_is_not_a_difference_from_the_preset_so_fix_never_reverts_it() -> None:
    from gymnasium_solver.config import config_to_yaml
    from gymnasium_solver.config.presets import preset_differences

    run = yaml.safe_load(config_to_yaml(resolve_config("CartPole-v1:ppo", ["grad_norm_parts=true", "gamma=0.9"])))
    assert run["grad_norm_parts"] is True
    assert set(preset_differences(run, resolve_config("CartPole-v1:ppo"))) == {"gamma"}
