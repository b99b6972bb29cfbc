"""The RL Zoo's generic ``atari`` entry: an ALE game with neither a preset of ours nor a Zoo entry of its own trains
with it, as rl_zoo3 does (its AtariWrapper + frame_stack read as atari_wrappers: true, each value's origin the
Zoo's, what differs said in a note); what gsolve cannot train from it is refused in one sentence; ALE v5 ids,
which skip frames themselves, train with frameskip=1 under the preprocessing; list-envs says which games take it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytest.importorskip("ale_py")

from gymnasium_solver.cli import app as cli  # noqa: E402 - after the skip: these tests need the ALE
from gymnasium_solver.config import ConfigError, resolve_config, resolve_with_origin  # noqa: E402
from gymnasium_solver.config import zoo as zoo_mod  # noqa: E402
from gymnasium_solver.config.catalog import environment_catalog  # noqa: E402
from gymnasium_solver.config.zoo import zoo_entry  # noqa: E402

needs_zoo = pytest.mark.skipif(zoo_entry("atari", "ppo") is None, reason="rl_zoo3 (with its atari entry) is not installed")
BREAKOUT = "BreakoutNoFrameskip-v4"
ATARI_KEYS = ("atari_wrappers", "network", "normalize_observations", "reward_clip", "n_envs", "n_steps", "n_epochs",
              "batch_size", "learning_rate", "clip_range", "ent_coef", "vf_coef", "max_env_steps")


def _fake_zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: dict[str, object]) -> None:
    (tmp_path / "ppo.yml").write_text(yaml.safe_dump(table), encoding="utf-8")
    monkeypatch.setattr(zoo_mod, "zoo_hyperparams_dir", lambda: tmp_path)


ZOO_ATARI_PPO = {"env_wrapper": ["stable_baselines3.common.atari_wrappers.AtariWrapper"], "frame_stack": 4,
                 "policy": "CnnPolicy", "n_envs": 8, "n_steps": 128, "n_epochs": 4, "batch_size": 256,
                 "n_timesteps": 1e7, "learning_rate": "lin_2.5e-4", "clip_range": "lin_0.1", "vf_coef": 0.5,
                 "ent_coef": 0.01}


@needs_zoo
def test_an_ale_game_without_an_entry_takes_the_zoos_atari_entry_with_its_origins() -> None:
    cfg, origin = resolve_with_origin(f"{BREAKOUT}:ppo")
    assert (origin.settings, origin.where) == ("zoo", "the RL Zoo's atari entry (rl_zoo3 hyperparams/ppo.yml)")
    assert cfg.atari_wrappers and cfg.network == "nature_cnn" and cfg.reward_clip == 1.0
    assert not cfg.normalize_observations
    assert (cfg.n_envs, cfg.n_steps, cfg.n_epochs, cfg.batch_size, cfg.max_env_steps) == (8, 128, 4, 256, 10_000_000)
    assert cfg.learning_rate.start == 2.5e-4 and cfg.clip_range.start == 0.1 and cfg.clip_range.end == 0.0
    assert {k: origin.sources[k] for k in ATARI_KEYS} == dict.fromkeys(ATARI_KEYS, "zoo")
    assert f"the RL Zoo has no {BREAKOUT} entry for ppo; this is its atari entry" in origin.notes[0]
    # What gsolve's preprocessing does differently from SB3's AtariWrapper is said, in one sentence.
    [wrapper] = [n for n in origin.notes if n.startswith("env_wrapper AtariWrapper")]
    assert "does not end an episode at a lost life, as SB3's AtariWrapper does" in wrapper and "\n" not in wrapper
    assert "both press FIRE where a game waits for it, gsolve at the start of every life" in wrapper
    # The bare id picks ppo and takes the same entry; the raw frames are no longer refused.
    assert resolve_with_origin(BREAKOUT).origin.where == origin.where


@needs_zoo
def test_gsolve_config_shows_the_atari_entry_as_every_values_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", f"{BREAKOUT}:ppo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# settings: zoo: the RL Zoo's atari entry (rl_zoo3 hyperparams/ppo.yml)")
    lines = dict(line.rsplit("  # ", 1) for line in out.splitlines() if not line.startswith("#"))
    assert lines["atari_wrappers: true"] == lines["network: nature_cnn"] == lines["reward_clip: 1.0"] == "zoo"


@needs_zoo
def test_what_gsolve_cannot_train_from_the_atari_entry_is_refused_in_one_sentence() -> None:
    # DQN and QR-DQN: the Zoo trains them on frames with a CNN, which gsolve's learn without.
    for algo in ("dqn", "qrdqn"):
        with pytest.raises(ConfigError) as exc:
            resolve_config(f"{BREAKOUT}:{algo}")
        text = str(exc.value)
        assert text.startswith(f"the RL Zoo's atari entry (rl_zoo3 hyperparams/{algo}.yml) trains {algo} on Atari "
                               f"frames with a CNN, which gsolve's {algo} cannot take")
        assert text.endswith(f"train {BREAKOUT} from pixels with ppo instead: gsolve train {BREAKOUT}:ppo")
    # A2C: its RMSpropTFLike optimizer is not ours; the command given instead resolves.
    with pytest.raises(ConfigError) as exc:
        resolve_config(f"{BREAKOUT}:a2c")
    text = str(exc.value)
    assert "policy_kwargs.optimizer_class" in text and "\n" not in text
    command = text.split("instead: gsolve train ")[1].split()
    assert command[:3] == [f"{BREAKOUT}:a2c", "--no-zoo", "--set"]
    cfg = resolve_config(f"{BREAKOUT}:a2c", command[3:], use_zoo=False)
    assert cfg.atari_wrappers and cfg.reward_clip == 1.0


def test_our_pong_preset_still_wins() -> None:
    cfg, origin = resolve_with_origin("PongNoFrameskip-v4:ppo")
    assert origin.settings == "preset" and cfg.reward_threshold == 19.0 and cfg.atari_wrappers
    assert not any("atari entry" in n for n in origin.notes)


def test_a_zoo_entry_for_the_id_wins_over_the_atari_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_zoo(tmp_path, monkeypatch, {"atari": ZOO_ATARI_PPO, BREAKOUT: {**ZOO_ATARI_PPO, "n_envs": 16}})
    cfg, origin = resolve_with_origin(f"{BREAKOUT}:ppo")
    assert origin.where == f"the RL Zoo's {BREAKOUT} entry (rl_zoo3 hyperparams/ppo.yml)" and cfg.n_envs == 16
    assert cfg.atari_wrappers  # its own AtariWrapper, read the same way
    cfg, origin = resolve_with_origin("ALE/Pong-v5:ppo")  # no entry of its own: the atari entry
    assert "atari entry" in origin.where and cfg.n_envs == 8
    assert resolve_with_origin("MountainCar-v0:ppo").origin.settings == "default"  # not an ALE game: no atari entry


@pytest.mark.parametrize(("change", "refused"), [
    ({"frame_stack": 3}, "frame_stack: 3 (gsolve's atari_wrappers stacks exactly 4 frames)"),
    ({"env_wrapper": [{"stable_baselines3.common.atari_wrappers.AtariWrapper": {"screen_size": 64}}]},
     "env_wrapper: AtariWrapper screen_size=64 (gsolve's atari_wrappers has it at 84)"),
])
def test_an_unmappable_atari_key_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      change: dict[str, object], refused: str) -> None:
    _fake_zoo(tmp_path, monkeypatch, {"atari": {**ZOO_ATARI_PPO, **change}})
    with pytest.raises(ConfigError) as exc:
        resolve_config(f"{BREAKOUT}:ppo")
    text = str(exc.value)
    assert text.startswith("the RL Zoo's atari entry (rl_zoo3 hyperparams/ppo.yml) cannot be trained as the Zoo "
                           f"trains it: {refused}; train with gsolve's defaults instead: gsolve train {BREAKOUT}:ppo "
                           "--no-zoo --set atari_wrappers=true"), text
    # An AtariWrapper that keeps lives out of the episode, as ours does, is read without that difference noted.
    _fake_zoo(tmp_path, monkeypatch, {"atari": {**ZOO_ATARI_PPO, "env_wrapper": [
        {"stable_baselines3.common.atari_wrappers.AtariWrapper": {"terminal_on_life_loss": False}}]}})
    notes = resolve_with_origin(f"{BREAKOUT}:ppo").origin.notes
    assert any("neither ending an episode at a lost life; both press FIRE" in n for n in notes), notes


@needs_zoo
def test_an_ale_v5_id_trains_with_frameskip_1_and_its_sticky_actions() -> None:
    from gymnasium_solver.envs import make_vec_env, space_spec

    cfg, origin = resolve_with_origin("ALE/Breakout-v5:ppo", ["n_envs=1", "batch_size=128"])
    assert "atari entry" in origin.where and cfg.env_kwargs == {}
    [note] = [n for n in origin.notes if n.startswith("ALE/Breakout-v5 skips frames itself (frameskip=4)")]
    assert "keeping its sticky actions (repeat_action_probability=0.25)" in note
    env = make_vec_env(cfg, 1)
    try:
        ale = env.envs[0].unwrapped
        assert (ale._frameskip, ale.ale.getFloat("repeat_action_probability")) == (1, 0.25)
        assert space_spec(env).observation_shape == (4, 84, 84)
        env.reset(seed=0)
        env.step(env.action_space.sample())
    finally:
        env.close()
    # A NoFrameskip id is made as it is, and says nothing about frame skipping.
    assert not any("skips frames" in n for n in resolve_with_origin(f"{BREAKOUT}:ppo").origin.notes)


@needs_zoo
def test_list_envs_shows_the_atari_entry_for_the_ale_games_it_applies_to(capsys: pytest.CaptureFixture[str]) -> None:
    rows = {e.env_id: e for e in environment_catalog("breakout").environments}
    assert (rows[BREAKOUT].settings, rows[BREAKOUT].zoo_algos, rows[BREAKOUT].zoo_entry) == ("zoo", ["ppo"], "atari")
    assert rows["ALE/Breakout-v5"].zoo_entry == "atari"
    [cartpole] = environment_catalog(only=["CartPole-v1"]).environments
    assert cartpole.zoo_entry is None and "dqn" in cartpole.zoo_algos  # its own entries, as before
    assert cli.main(["list-envs", "--filter", "BreakoutNoFrameskip-v4"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(BREAKOUT))
    assert row.split()[1:] == ["zoo", "-", "ppo", "(atari", "entry)"]


@needs_zoo
def test_breakout_trains_from_the_atari_entry_and_writes_its_run_folder(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver.contract import run_folder as rf

    # One rollout of 2 envs x 64 steps; the final evaluation is one game cut at 2,000 frames.
    tiny = ["n_envs=2", "n_steps=64", "batch_size=128", "n_epochs=1", "max_env_steps=128", "eval_freq=1000000",
            "eval_episodes=1", "device=cpu", "env_kwargs.max_num_frames_per_episode=2000"]
    code = cli.main(["train", f"{BREAKOUT}:ppo", "--quiet", "--no-fail", "--runs-dir", str(tmp_path), "--set", *tiny])
    assert code == 0
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    info = rf.read_run_info(run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.observation_shape == [4, 84, 84], info.failure
    assert info.config_origin is not None and info.config_origin.settings == "zoo"
    assert info.config_origin.sources["atari_wrappers"] == "zoo" and info.last_eval is not None


@needs_zoo
def test_a_plain_ale_id_resolves_in_a_fresh_process_and_is_listed_as_it_resolves() -> None:
    """Breakout-v4 (neither ALE/ nor NoFrameskip) exists only once ale_py is imported: a new process must still find
    it (it was 'unknown environment ... did you mean FrozenLake-v1' while list-envs listed it)."""
    import subprocess
    import sys

    code = ("from gymnasium_solver.config import resolve_with_origin; from gymnasium_solver.config.catalog import "
            "environment_catalog; cfg, origin = resolve_with_origin('Breakout-v4:ppo'); "
            "row = environment_catalog(contains='breakout-v4').environments[0]; "
            "print(origin.settings, cfg.atari_wrappers, row.env_id, row.settings, row.zoo_entry)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-5:] == ["zoo", "True", "Breakout-v4", "zoo", "atari"]
