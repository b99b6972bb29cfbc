"""Seed samples (gymnasium_solver/presets/seed_samples): the rank test of `gsolve check --against preset` and the
speed line of `gsolve diagnose`, on synthetic samples (exact p-values) and on the shipped files (today's presets)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract.run_folder import parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics import references as refs
from gymnasium_solver.diagnostics import seed_sample as ss
from gymnasium_solver.diagnostics.diagnose import diagnose

FILES = sorted(ss.SAMPLES_DIR.glob("*.json"))
FIXTURES = Path(__file__).parent / "fixtures"


def _sample(needs: list[float], config_id: str = "CartPole-v1:dqn", threshold: float = 475.0) -> ss.SeedSample:
    fingerprint = refs.preset_fingerprint(config_id)
    assert fingerprint is not None
    runs = [ss.SampleRun(seed=i, solved=bool(np.isfinite(n)), env_steps=int(n) if np.isfinite(n) else 60_000)
            for i, n in enumerate(needs)]
    return ss.SeedSample(config_id=config_id, preset_fingerprint=fingerprint, reward_threshold=threshold,
                         max_env_steps=60_000, runs=runs,
                         measured=ss.SampleMeasured(command="test", commit="0000000", date="today", cpu="test cpu",
                                                    versions={}))


def test_the_rank_p_value_counts_ties_and_unsolved_seeds_as_at_least_as_slow() -> None:
    sample = _sample([2048.0 * k for k in range(1, 20)] + [np.inf])  # 2,048 ... 38,912 and one unsolved
    p = ss.place(38_912, sample)
    # 38,912 itself (a tie) and the unsolved seed need at least as much: (1 + 2) / 21.
    assert (p.seeds, p.as_slow_or_slower, p.faster, p.unsolved) == (20, 2, 18, 1)
    assert p.p_value == pytest.approx(3 / 21)
    assert ss.place(100_000, sample).p_value == pytest.approx(2 / 21)  # only the unsolved seed is as slow
    assert ss.place(1, sample).p_value == 1.0
    assert p.median == 20_480 and p.slowest_solved == 38_912


def test_the_rank_test_keeps_its_false_alarm_rate_on_a_heavy_tailed_discrete_distribution() -> None:
    # Env steps come in whole evaluation intervals (ties) and one seed in ten is 4x slower (CartPole DQN's shape).
    # On this draw a t test on the logs of 5 seeds flags 7.8% and a rank test counting ties as faster 6.0%.
    rng = np.random.default_rng(7)

    def draw(n: int) -> np.ndarray:
        return 2048.0 * (1 + rng.geometric(0.4, n)) * np.where(rng.random(n) < 0.1, 4, 1)

    flagged = trials = 0
    for _ in range(300):
        sample = _sample(list(draw(19)))
        fresh = draw(20)
        flagged += sum(ss.place(int(x), sample).p_value <= 0.05 for x in fresh)
        trials += len(fresh)
    assert flagged / trials <= 0.05, flagged / trials  # counting ties as slower would flag ties: above 5%


def test_a_sample_of_another_preset_version_or_threshold_is_not_used(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ss, "SAMPLES_DIR", tmp_path)
    assert ss.shipped_sample("CartPole-v1:dqn") == "no seed sample is shipped for CartPole-v1:dqn"
    ss.sample_path("CartPole-v1:dqn").write_text(_sample([4096.0] * 19).model_dump_json(), encoding="utf-8")
    assert isinstance(ss.shipped_sample("CartPole-v1:dqn", 475.0), ss.SeedSample)
    assert "solves at 475, not at 400" in str(ss.shipped_sample("CartPole-v1:dqn", 400.0))
    monkeypatch.setattr(refs, "preset_fingerprint", lambda config_id: "another-version")
    stale = ss.shipped_sample("CartPole-v1:dqn")
    assert isinstance(stale, str) and "another version of the preset" in stale and "make_seed_samples" in stale
    ss.sample_path("CartPole-v1:dqn").write_text("{not json", encoding="utf-8")
    assert "cannot be read" in str(ss.shipped_sample("CartPole-v1:dqn"))


def _diagnose_solved_dqn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, needs: list[float]) -> str | None:
    """A healthy held-out CartPole-v1:dqn run (the preset, seed 52) solved at 28,672 env steps, diagnosed against
    a synthetic sample."""
    monkeypatch.setattr(ss, "SAMPLES_DIR", tmp_path)
    ss.sample_path("CartPole-v1:dqn").write_text(_sample(needs).model_dump_json(), encoding="utf-8")
    run = FIXTURES / "heldout2" / "k09_s52"
    info = read_run_info(run)
    assert info.solved_at is not None and info.solved_at.env_steps == 28_672
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    # the preset as it resolves today (the run was made with an older version of it: that drift would count as a
    # difference), on the run's seed, budget and evaluation: the run stands for a seed of today's preset
    today = resolve_config("CartPole-v1:dqn", [f"seed={config['seed']}"]).model_dump(mode="json")
    d = diagnose(info, {**config, **today}, parse_metrics_text((run / "metrics.csv").read_text(encoding="utf-8")))
    assert d.references.deviations == [] and d.references.preset is not None
    return d.speed


def test_diagnose_places_a_solved_run_among_the_preset_seeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _diagnose_solved_dqn(tmp_path, monkeypatch, [4096.0, 6144.0, 8192.0, 10240.0] * 5)
    assert slow is not None and "of 20 seeds of the preset, 20 solved faster" in slow
    assert "slower than every seed of the sample (rank p = 0.048)" in slow and "rarer than 1 in 20" in slow
    tail = _diagnose_solved_dqn(tmp_path, monkeypatch, [4096.0, 6144.0, 8192.0, 10240.0] * 5 + [30720.0])
    assert tail is not None and "20 solved faster" in tail and "slow tail (rank p = 0.091)" in tail
    assert "the seed's draw, not a fault" in tail
    ordinary = _diagnose_solved_dqn(tmp_path, monkeypatch, [8192.0, 16384.0, 32768.0, 65536.0] * 5)
    assert ordinary is not None and "10 solved faster" in ordinary and "an ordinary seed" in ordinary
    fast = _diagnose_solved_dqn(tmp_path, monkeypatch, [131072.0] * 20)  # not called "ordinary" when ahead of all
    assert fast is not None and "0 solved faster" in fast and fast.endswith("faster than every seed of the sample.")


def test_no_sample_no_speed_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = FIXTURES / "heldout2" / "k09_s52"
    monkeypatch.setattr(ss, "SAMPLES_DIR", tmp_path)
    d = diagnose(read_run_info(run), yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")),
                 parse_metrics_text((run / "metrics.csv").read_text(encoding="utf-8")))
    assert d.speed is None


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_shipped_sample_is_of_todays_preset_and_can_reach_alpha(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    sample = ss.shipped_sample(raw["config_id"])
    assert isinstance(sample, ss.SeedSample), (
        f"{path.name}: {sample}; run .venv/bin/python scripts/make_seed_samples.py {raw['config_id']} --seeds ...")
    assert len(sample.runs) >= ss.MIN_SEEDS and len({r.seed for r in sample.runs}) == len(sample.runs)
    assert sample.reward_threshold == refs.resolve_config(raw["config_id"]).reward_threshold


def test_the_package_ships_a_sample_for_the_cheap_presets() -> None:
    shipped = {p.stem for p in FILES}
    assert {"CartPole-v1.ppo", "CartPole-v1.dqn", "CartPole-v1.a2c", "CartPole-v1.reinforce", "Acrobot-v1.ppo",
            "Acrobot-v1.reinforce", "Pendulum-v1.ppo"} <= shipped
    # the copy in a wheel: package data, found by importlib.resources (pyproject's package-data globs it)
    assert "presets/seed_samples/*.json" in (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")


def test_an_unsolved_run_is_told_how_many_preset_seeds_needed_its_budget() -> None:
    sample = _sample([4096.0] * 10 + [20480.0] * 9 + [np.inf])  # one seed never solved in the 60,000 budget
    short = ss.budget_line(10_000, sample, differs=True)  # 10 of 20 need more: the budget alone explains it
    assert short.startswith("not solved in 10,000 env steps; 10 of 20 seeds of the preset needed more")
    assert "(1 never solved in the preset's 60,000)" in short and "fails 50% of the preset's seeds by itself" in short
    assert "the preset's own budget" in short
    rare = ss.budget_line(40_000, sample, differs=False)  # only the never-solving seed: the seed can explain it
    assert "1 of 20 seeds" in rare and "rank p = 0.095" in rare and "the seed's draw can explain it" in rare
    faulty = ss.budget_line(40_000, sample, differs=True)
    assert faulty.endswith("the settings that differ from the preset are the likelier cause (below).")
    clean = _sample([4096.0] * 20)
    odd = ss.budget_line(40_000, clean, differs=False)
    assert "0 of 20 seeds" in odd and "none did, yet no key differs" in odd and "library versions" in odd
    # A seed that solved at exactly the run's budget was faster than a run unsolved after it: a budget of 4,096 does
    # not fail the 10 seeds that solve at 4,096.
    tied = ss.budget_line(4_096, sample, differs=True)
    assert "10 of 20 seeds of the preset needed more" in tied and "fails 50%" in tied


def test_a_run_of_an_older_version_of_the_preset_is_not_called_a_seed_of_todays(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # heldout2's run was made with CartPole-v1:dqn as it was then; today's preset has changed keys since (drift): the
    # sample describes another config, so the line names the differences, never "the seed's draw"
    monkeypatch.setattr(ss, "SAMPLES_DIR", tmp_path)
    ss.sample_path("CartPole-v1:dqn").write_text(_sample([4096.0, 6144.0, 8192.0, 10240.0] * 5).model_dump_json(),
                                                 encoding="utf-8")
    run = FIXTURES / "heldout2" / "k09_s52"
    d = diagnose(read_run_info(run), yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")),
                 parse_metrics_text((run / "metrics.csv").read_text(encoding="utf-8")))
    assert d.references.deviations == [] and any("has changed since this run" in n for n in d.notes), d.notes
    assert d.speed is not None and "the settings that differ from the preset may be why" in d.speed
    assert "seed's draw" not in d.speed and "rarer than" not in d.speed


def test_a_users_preset_of_the_same_name_is_not_ranked_among_our_seeds(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ss.sample_path("CartPole-v1:ppo"), tmp_path / "CartPole-v1.ppo.json")
    monkeypatch.setattr(ss, "SAMPLES_DIR", tmp_path)
    assert isinstance(ss.shipped_sample("CartPole-v1:ppo"), ss.SeedSample)
    mine = tmp_path / "presets"
    mine.mkdir()
    (mine / "CartPole-v1.yaml").write_text("ppo:\n  learning_rate: 0.001\n", encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(mine))
    why = ss.shipped_sample("CartPole-v1:ppo")
    assert isinstance(why, str) and "your preset folder's CartPole-v1:ppo replaces it" in why
