"""bench/bench_sb3_presets.py builds the RL Zoo arm as the Zoo trains (its own hyperparameters, one env
unless its entry says otherwise, its n_timesteps as the budget; only our judging keys) and judges the
comparison on medians where an unsolved seed counts with its whole budget. No training here."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from shared_util import load_bench

from gymnasium_solver.config import resolve_config


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_sb3_presets")


@pytest.mark.parametrize("config_id", ["Pendulum-v1:sac", "Pendulum-v1:td3"])
def test_zoo_arm_is_the_zoos_settings_judged_like_ours(bench: ModuleType, config_id: str) -> None:
    algo, env_id = bench.PAIRS[config_id]
    zoo_entry = bench.zoo_hyperparams(algo, env_id)
    zoo = bench.zoo_config(config_id, seed=3)
    ours = resolve_config(config_id, ["seed=3"])
    assert zoo.n_envs == zoo_entry.get("n_envs", 1) == 1  # rl_zoo3 trains these on one env
    assert zoo.max_env_steps == int(float(zoo_entry["n_timesteps"]))
    assert zoo.seed == 3
    for key in ("learning_rate", "batch_size", "train_freq", "gradient_steps", "learning_starts"):
        if key in zoo_entry:
            assert getattr(zoo, key) == zoo_entry[key], key
    for key in ("eval_freq", "eval_episodes", "reward_threshold"):
        assert getattr(zoo, key) == getattr(ours, key), key


def test_unsolved_zoo_seeds_count_with_their_whole_budget(bench: ModuleType) -> None:
    ours = [{"solved": True, "steps": s, "wall_s": w} for s, w in ((3000, 10.0), (4000, 12.0), (5000, 30.0))]
    zoo = [{"solved": False, "steps": 20000, "wall_s": 40.0}, {"solved": True, "steps": 8000, "wall_s": 20.0},
           {"solved": True, "steps": 6000, "wall_s": 18.0}]
    summary, line = bench.summarise("Pendulum-v1:sac", {"ours": ours, "zoo": zoo})
    assert summary["zoo"] == {"solved": "2/3", "median_env_steps": 8000, "median_wall_s": 20.0}
    assert "wall ours/zoo = 0.60" in line and "whole budget" in line
    assert line.endswith("half the wall time MISSED, 3x faster MISSED")
    faster = [dict(r, wall_s=r["wall_s"] / 2) for r in ours]  # 0.30 of the Zoo's wall time
    assert bench.summarise("Pendulum-v1:sac", {"ours": faster, "zoo": zoo})[1].endswith(
        "half the wall time MET, 3x faster MET")
    half = [dict(r, wall_s=r["wall_s"] / 1.5) for r in ours]  # 0.40
    assert bench.summarise("Pendulum-v1:sac", {"ours": half, "zoo": zoo})[1].endswith(
        "half the wall time MET, 3x faster MISSED")


def test_write_records_each_arms_rows_by_seed_with_the_preset_and_its_budget(bench: ModuleType, tmp_path: Path) -> None:
    results = bench.bench_results
    measured = results.start_measuring(["bench/bench_sb3_presets.py", "--only", "Pendulum-v1:sac", "--write", "t"])
    runs = {"ours": [{"solved": True, "steps": 2000, "wall_s": 5.23456, "budget": 50000},
                     {"solved": False, "steps": 50000, "wall_s": 99.0, "budget": 50000}],
            "zoo": [{"solved": True, "steps": 6000, "wall_s": 30.0, "budget": 20000},
                    {"solved": True, "steps": 5000, "wall_s": 25.0, "budget": 20000}]}
    bench.write("t", results.finish(measured), {"Pendulum-v1:sac": {"seeds": [1000, 1001], "summary": {}, "runs": runs}},
                tmp_path)
    r = results.read_results("t", tmp_path)
    assert r.measured.command == ".venv/bin/python bench/bench_sb3_presets.py --only Pendulum-v1:sac --write t"
    assert "RL Zoo" in r.description and "bench_sb3_presets.py" in r.description
    p = r.presets["Pendulum-v1:sac"]
    assert p.budget == resolve_config("Pendulum-v1:sac", []).max_env_steps
    assert p.arms["ours"] == [results.Row(seed=1000, solved=True, env_steps=2000, wall_s=5.235),
                              results.Row(seed=1001, solved=False, env_steps=50000, wall_s=99.0)]
    assert [row.seed for row in p.arms["zoo"]] == [1000, 1001] and p.arms["zoo"][1].env_steps == 5000
