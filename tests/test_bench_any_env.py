"""bench/bench_any_env.py: which settings and threshold both arms train with, how bad input is refused, what
is recorded per seed. No training here (the SB3 model is built, never learned)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from shared_util import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_any_env")


def test_thresholds_are_env_id_equals_number(bench: ModuleType) -> None:
    assert bench.parse_thresholds(["CliffWalking-v1=-13", "Foo-v0=0.5"]) == {"CliffWalking-v1": -13.0, "Foo-v0": 0.5}
    for bad in ("CliffWalking-v1", "=3", "Foo-v0=nan", "Foo-v0=high"):
        with pytest.raises(SystemExit, match="--threshold takes ENV_ID=NUMBER"):
            bench.parse_thresholds([bad])


def test_the_threshold_is_the_given_one_else_the_specs_else_the_tables(bench: ModuleType) -> None:
    assert bench.threshold_overrides("Taxi-v4", 8.0, {}) == ([], "")
    assert bench.threshold_overrides("Taxi-v4", 8.0, {"Taxi-v4": 7.5}) == (["reward_threshold=7.5"],
                                                                      "given with --threshold; its spec's is 8")
    extra, why = bench.threshold_overrides("CliffWalking-v1", None, {})
    assert extra == ["reward_threshold=-13.0"] and "shortest safe path" in why
    with pytest.raises(SystemExit, match="--threshold Blank-v0=VALUE"):
        bench.threshold_overrides("Blank-v0", None, {})


def test_bad_envs_get_one_sentence_before_any_run(bench: ModuleType) -> None:
    with pytest.raises(SystemExit, match=r"^Nope-v0: unknown environment 'Nope-v0'") as unknown:
        bench.resolve_target("Nope-v0", [], {})
    assert "\n" not in str(unknown.value)
    with pytest.raises(SystemExit, match="bench_presets_vs_zoo.py compares presets"):
        bench.resolve_target("CartPole-v1", [], {})
    with pytest.raises(SystemExit, match="for ppo, a2c, dqn only"):
        bench.resolve_target("Taxi-v4:qrdqn", [], {})
    with pytest.raises(SystemExit, match="ModuleThatIsNot"):
        bench.resolve_target("Taxi-v4", ["ModuleThatIsNot"], {})


def test_an_env_without_a_zoo_entry_trains_gsolves_defaults_in_both_arms(bench: ModuleType) -> None:
    target = bench.resolve_target("CliffWalking-v1", [], {})
    assert (target.algo, target.source, target.threshold) == ("dqn", "default", -13.0)  # a table: Discrete states
    assert target.threshold_note  # not the spec's: the reason goes into the results
    cmd = bench.ours_command(target, 2, Path("/tmp/r"), ["minigrid"])
    assert cmd[1:4] == ["train", "CliffWalking-v1", "--seed"] and cmd[4] == "2"
    assert cmd[-3:] == ["--set", "reward_threshold=-13.0", "confirm_episodes=0"] and ["--env-package", "minigrid"] == cmd[-5:-3]
    taxi = bench.resolve_target("Taxi-v4", [], {})
    # the spec's threshold: nothing set but the Zoo arm's solve definition (no confirmation episodes)
    assert bench.ours_command(taxi, 0, Path("/tmp/r"), [])[-3:] == ["--no-fail", "--set", "confirm_episodes=0"]


def test_ours_written_as_a_zoo_entry_builds_sb3s_ppo_with_our_settings(bench: ModuleType) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    from gymnasium_solver.config import resolve_config

    cfg = resolve_config("Taxi-v4:ppo", ["learning_rate.start=0.001", "learning_rate.end=0", "n_steps=256"])
    entry = bench.zoo_entry_from_config(cfg)
    assert entry["n_timesteps"] == cfg.max_env_steps and entry["learning_rate"] == "lin_0.001"
    model = sb3.PPO(entry["policy"], "Taxi-v4", device="cpu", **bench.shared.sb3_kwargs("ppo", entry))
    for ours, theirs in (("n_steps", "n_steps"), ("batch_size", "batch_size"), ("n_epochs", "n_epochs"),
                         ("gamma", "gamma"), ("gae_lambda", "gae_lambda"), ("ent_coef", "ent_coef"),
                         ("vf_coef", "vf_coef"), ("max_grad_norm", "max_grad_norm")):
        assert getattr(model, theirs) == getattr(cfg, ours), ours
    assert model.lr_schedule(1.0) == pytest.approx(0.001) and model.lr_schedule(0.0) == 0.0
    assert model.policy.net_arch == list(cfg.hidden_sizes) and model.policy.activation_fn.__name__ == "Tanh"
    assert model.policy.ortho_init is True
    plain = bench.zoo_entry_from_config(resolve_config("Taxi-v4:ppo", ["ortho_init=false"]))
    assert sb3.PPO(plain["policy"], "Taxi-v4", device="cpu", **bench.shared.sb3_kwargs("ppo", plain)).policy.ortho_init is False
    with pytest.raises(SystemExit, match="the Zoo's schedules"):
        bench.zoo_entry_from_config(resolve_config("Taxi-v4:ppo", ["learning_rate.start=0.001",
                                                                   "learning_rate.end=0.0001"]))


def test_ours_written_as_a_zoo_entry_builds_sb3s_dqn_with_our_table(bench: ModuleType) -> None:
    """Taxi-v4's defaults (DQN learning a table) reach SB3's DQN with the same values and one linear layer."""
    sb3 = pytest.importorskip("stable_baselines3")
    from gymnasium_solver.config import resolve_config

    target = bench.resolve_target("Taxi-v4", [], {})
    assert (target.algo, target.source) == ("dqn", "default")
    cfg = resolve_config("Taxi-v4", [], use_zoo=False)
    entry = bench.zoo_entry_from_config(cfg)
    assert "log_std_init" not in entry["policy_kwargs"] and entry["n_envs"] == 1
    model = sb3.DQN(entry["policy"], "Taxi-v4", device="cpu", **bench.shared.sb3_kwargs("dqn", entry))
    for key in ("batch_size", "buffer_size", "learning_starts", "gamma", "target_update_interval", "gradient_steps",
                "exploration_fraction", "exploration_final_eps", "tau", "max_grad_norm", "n_steps"):
        assert getattr(model, key) == getattr(cfg, key), key
    assert model.train_freq.frequency == cfg.train_freq and model.learning_rate == cfg.learning_rate
    linears = [m for m in model.q_net.q_net.modules() if isinstance(m, __import__("torch").nn.Linear)]
    assert [tuple(m.weight.shape) for m in linears] == [(6, 500)]  # the table, as ours


def test_minigrids_dict_reaches_sb3_as_ours_sees_it(bench: ModuleType) -> None:
    pytest.importorskip("minigrid")
    import gymnasium as gym
    import minigrid  # noqa: F401 - registers MiniGrid-*

    env = bench.drop_text_and_flatten(gym.make("MiniGrid-Empty-5x5-v0"))
    assert env.observation_space.shape == (151,)  # 7x7x3 image + direction one-hot; 'mission' (text) dropped
    assert bench.drop_text_and_flatten(gym.make("Taxi-v4")).observation_space == gym.spaces.Discrete(500)


def test_our_arm_is_read_from_run_json(bench: ModuleType) -> None:
    solved = {"solved_at": {"env_steps": 12_000, "wall_seconds": 3.5}, "progress": {"env_steps": 20_000},
              "best_eval": {"return_mean": 91.0}, "config_origin": {"settings": "zoo"}}
    assert bench.outcome_from_run(solved, 1, 9.0) == bench.Outcome(1, True, 12_000, 3.5, 9.0, 91.0, "zoo")
    unsolved = {"solved_at": None, "progress": {"env_steps": 20_000, "wall_seconds": 8.0}, "best_eval": None,
                "config_origin": {"settings": "default"}}
    assert bench.outcome_from_run(unsolved, 2, 10.0) == bench.Outcome(2, False, 20_000, 8.0, 10.0, None, "default")


def test_an_unsolved_seed_counts_with_what_it_spent(bench: ModuleType) -> None:
    rows = [bench.Outcome(0, True, 1_000, 1.0, 2.0, 1.0, "zoo"), bench.Outcome(1, False, 20_000, 9.0, 10.0, 0.0, "zoo"),
            bench.Outcome(2, True, 3_000, 2.0, 3.0, 1.0, "zoo")]
    assert bench.summarise(rows) == bench.ArmSummary(2, 3, 3_000, 2.0)
    with pytest.raises(ValueError, match="no rows"):
        bench.summarise([])


def test_the_results_file_holds_each_seed_and_the_settings_source(bench: ModuleType, tmp_path: Path) -> None:
    results = bench.bench_results
    target = bench.resolve_target("CliffWalking-v1", [], {})
    rows = {"ours": [bench.Outcome(0, True, 8_192, 4.0, 9.0, -13.0, "default")],
            "zoo": [bench.Outcome(0, False, 200_000, 80.0, 85.0, -20.0, "ours, as a Zoo entry")]}
    measured = results.start_measuring(["bench/bench_any_env.py", "CliffWalking-v1", "--write", "t"])
    bench.write("t", measured, {"CliffWalking-v1": bench.record(target, rows)}, tmp_path)
    back = results.read_results("t", tmp_path)
    p = back.presets["CliffWalking-v1"]
    assert p.threshold == -13.0 and p.settings.startswith("default: ") and p.budget == target.budget
    assert [(r.solved, r.env_steps, r.source) for r in p.arms["ours"]] == [(True, 8_192, "default")]
    assert p.arms["zoo"][0].process_s == 85.0 and back.measured.command.endswith("CliffWalking-v1 --write t")


def test_the_docs_block_is_rendered_from_the_files(bench: ModuleType) -> None:
    results = bench.bench_results
    render = load_bench("render_any_env")
    measured = results.start_measuring(["bench/bench_any_env.py", "Taxi-v4", "--write", "any_env"])
    row = results.Row
    taxi = results.PresetRows(arms={"ours": [row(seed=s, solved=True, env_steps=n, wall_s=w, source="default")
                                             for s, n, w in ((0, 10_000, 4.0), (1, 30_000, 9.0), (2, 20_000, 6.0))],
                                    "zoo": [row(seed=s, solved=s != 1, env_steps=n, wall_s=w, source="ours, as a Zoo entry")
                                            for s, n, w in ((0, 20_000, 12.0), (1, 200_000, 99.0), (2, 40_000, 18.0))]},
                              budget=200_000, threshold=8.0, settings="default: gsolve's defaults")
    estimate = results.PresetRows(arms={"zoo": [row(seed=0, solved=False, env_steps=10_000, wall_s=10.0)]},
                                  budget=1_000_000, settings="zoo: the RL Zoo's MountainCar-v0 entry")
    files = {"any_env": results.Results(name="any_env", description="", measured=measured, presets={"Taxi-v4": taxi}),
             "any_env_estimates": results.Results(name="any_env_estimates", description="", measured=measured,
                                                  presets={"MountainCar-v0": estimate, "Taxi-v4": estimate})}
    text = render.render_any_env(files)
    assert "| `Taxi-v4` | default | ours, as a Zoo entry | 8 | 3/3, 20,000, 6.0 s | 2/3, >= 40,000, >= 18.0 s | 3.00 | 200,000 | yes |" \
        in text
    assert "| `MountainCar-v0` |" in text and "| 1,000,000 | 1,000 | 17 min | 1.7 h |" in text
    assert text.count("`Taxi-v4`") == 1  # measured, so not among the estimates
