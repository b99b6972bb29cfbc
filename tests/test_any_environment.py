"""Any registered environment trains (issue 22, items 1 and 5): settings resolve in one chain (our preset,
else the RL Zoo's entry, else gsolve's defaults, then overrides), each value's source is recorded in
run.json, spaces an algorithm cannot take are refused in one line, and the MCP tools take any env id."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, resolve_config, resolve_with_origin
from gymnasium_solver.config import zoo as zoo_mod
from gymnasium_solver.config.chain import NO_THRESHOLD
from gymnasium_solver.config.zoo import zoo_entry
from gymnasium_solver.contract import run_folder as rf

if TYPE_CHECKING:
    from conftest import RealRuns

needs_zoo = pytest.mark.skipif(zoo_entry("MountainCar-v0", "ppo") is None, reason="rl_zoo3 is not installed")


def _non_default(sources: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sources.items() if v != "default"}


@needs_zoo
def test_mountaincar_without_a_preset_takes_the_zoos_entry() -> None:
    r = resolve_with_origin("MountainCar-v0:ppo")
    cfg, origin = r.config, r.origin
    assert (cfg.config_id, origin.settings) == ("MountainCar-v0:ppo", "zoo")
    assert "rl_zoo3 hyperparams/ppo.yml" in origin.where
    # n_timesteps -> max_env_steps, normalize -> normalize_observations and normalize_rewards; the rest by name
    assert (cfg.max_env_steps, cfg.n_envs, cfg.n_steps, cfg.n_epochs, cfg.gae_lambda) == (1_000_000, 16, 16, 4, 0.98)
    assert cfg.normalize_observations is True and cfg.normalize_rewards is True and cfg.reward_threshold == -110.0
    assert origin.sources["n_steps"] == "zoo" and origin.sources["reward_threshold"] == "spec"
    assert origin.sources["learning_rate"] == "default"  # the entry is silent and SB3's 3e-4 is ours too
    assert origin.sources["normalize_rewards"] == "zoo"  # VecNormalize's reward scaling, reproduced
    assert not any("not reproduced" in n for n in origin.notes), origin.notes


@needs_zoo
def test_the_zoos_dqn_entry_with_its_network_and_sb3s_implicit_defaults() -> None:
    r = resolve_with_origin("MountainCar-v0:dqn", ["seed=3"])
    cfg = r.config
    assert cfg.hidden_sizes == [256, 256] and cfg.activation == "relu" and cfg.n_envs == 1  # type: ignore[union-attr]
    assert (cfg.buffer_size, cfg.train_freq, cfg.gradient_steps, cfg.max_env_steps) == (10_000, 16, 8, 120_000)  # type: ignore[union-attr]
    assert r.origin.sources["hidden_sizes"] == "zoo" and r.origin.sources["seed"] == "override"


def test_a_lin_schedule_is_linear_to_zero_and_policy_kwargs_are_read_as_data(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    settings, refused, notes = zoo_mod._settings("ppo", {
        "learning_rate": "lin_0.001", "clip_range": "lin_0.2", "n_timesteps": 2e5,
        "policy_kwargs": "dict(log_std_init=-2, ortho_init=False, activation_fn=nn.ReLU, "
                         "net_arch=dict(pi=[256, 256], vf=[256, 256]))",
        "normalize": "{'norm_obs': True, 'norm_reward': False}"})
    assert settings["learning_rate"] == {"start": 0.001, "end": 0.0} and settings["max_env_steps"] == 200_000
    assert settings["hidden_sizes"] == [256, 256] and settings["activation"] == "relu"
    assert settings["log_std_init"] == -2 and settings["normalize_observations"] is True
    assert refused == [] and settings["ortho_init"] is False  # torch's default initialisation, as the Zoo's
    # Nothing in an entry is evaluated: a call other than dict(...) is refused, naming the key.
    _, refused, _ = zoo_mod._settings("ppo", {"policy_kwargs": f"dict(x=open({str(marker)!r}, 'w'))"})
    assert refused and refused[0].startswith("policy_kwargs") and not marker.exists()


def test_what_cannot_be_mapped_is_refused_in_one_sentence_naming_the_key(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ppo.yml").write_text(yaml.safe_dump({"MountainCar-v0": {
        "n_timesteps": 1e5, "frame_stack": 4, "env_wrapper": ["gymnasium.wrappers.TimeAwareObservation"],
        "policy_kwargs": "dict(net_arch=dict(pi=[64], vf=[32]))"}}), encoding="utf-8")
    monkeypatch.setattr(zoo_mod, "zoo_hyperparams_dir", lambda: tmp_path)
    with pytest.raises(ConfigError) as exc:
        resolve_config("MountainCar-v0:ppo")
    text = str(exc.value)
    assert "\n" not in text and "frame_stack: 4" in text and "env_wrapper" in text and "policy_kwargs.net_arch" in text
    assert "--no-zoo" in text
    # --no-zoo (use_zoo=False) takes gsolve's defaults instead
    assert resolve_with_origin("MountainCar-v0:ppo", use_zoo=False).origin.settings == "default"


def test_with_neither_preset_nor_zoo_entry_the_documented_defaults() -> None:
    r = resolve_with_origin("MountainCarContinuous-v0:reinforce")  # the Zoo has no REINFORCE
    assert r.origin.settings == "default" and "reinforce with box actions" in r.origin.where
    assert r.config.normalize_observations is True and r.config.max_env_steps == 1_000_000
    assert r.origin.sources["normalize_observations"] == "default" and r.config.reward_threshold == 90.0
    discrete = resolve_with_origin("MountainCar-v0:ppo", use_zoo=False)
    assert discrete.origin.settings == "default" and discrete.config.max_env_steps == 200_000


def test_a_bare_env_id_picks_the_algorithm_from_its_spaces_and_says_why() -> None:
    r = resolve_with_origin("MountainCarContinuous-v0", use_zoo=False)
    assert r.config.config_id == "MountainCarContinuous-v0:ppo"
    assert "Box(-1.0, 1.0, (1,), float32) actions" in r.origin.notes[0] and "training with ppo" in r.origin.notes[0]
    assert resolve_config("CartPole-v1").config_id == "CartPole-v1:ppo"  # a preset: its ppo variant


def test_no_reward_threshold_trains_to_the_budget_and_says_so() -> None:
    r = resolve_with_origin("Pendulum-v1:a2c", use_zoo=False)  # the spec has none, the defaults neither
    assert r.config.reward_threshold is None and NO_THRESHOLD.format(env_id="Pendulum-v1") in r.origin.notes
    over = resolve_with_origin("Pendulum-v1:a2c", ["reward_threshold=-200"], use_zoo=False)
    assert over.origin.sources["reward_threshold"] == "override" and over.config.reward_threshold == -200


@pytest.mark.parametrize("config_id, words", [
    ("CartPole-v1:sac", ["Discrete(2) actions", "sac cannot take", "ppo, a2c, reinforce, dqn, qrdqn"]),
    ("MountainCarContinuous-v0:dqn", ["Box(-1.0, 1.0, (1,), float32) actions", "dqn cannot take", "sac, td3, tqc"]),
    ("CartPol-v1:ppo", ["unknown environment 'CartPol-v1'", "did you mean 'CartPole-v1'"]),
    ("MountainCar-v0:ppp", ["must name an algorithm", "did you mean 'ppo'"]),
    ("evil_module:Env-v0:ppo", ["names a Python module", "never does"]),
])
def test_refusals_are_one_line_and_name_what_would_work(config_id: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        resolve_with_origin(config_id)
    assert "\n" not in str(exc.value) and all(w in str(exc.value) for w in words), str(exc.value)


def test_without_rl_zoo3_the_defaults_say_what_installing_it_would_give(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zoo_mod, "zoo_hyperparams_dir", lambda: None)  # a core install
    r = resolve_with_origin("MountainCar-v0:ppo")
    assert r.origin.settings == "default"
    assert any('rl_zoo3 is not installed' in n and 'gymnasium-solver[zoo]' in n for n in r.origin.notes), r.origin.notes
    assert not any("rl_zoo3" in n for n in resolve_with_origin("MountainCar-v0:ppo", use_zoo=False).origin.notes)
    assert not any("rl_zoo3" in n for n in resolve_with_origin("MountainCar-v0:reinforce").origin.notes)  # not tuned


def test_image_observations_no_network_takes_are_refused_before_a_run_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """CarRacing's 96x96x3 frames (channels last) reached the trainer, which failed after making a run folder
    (with network: nature_cnn, in torch's convolution); now one line before it, saying what would train."""
    pytest.importorskip("Box2D")
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    for algo in ("ppo", "sac"):
        code = cli.main(["train", f"CarRacing-v3:{algo}", "--no-zoo", "--runs-dir", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "Box(0, 255, (96, 96, 3), uint8) observations (images, channels last), which no gsolve algorithm " \
               "takes: network: nature_cnn (with ppo, a2c, reinforce)" in err and "FrameStackObservation(4)" in err
    assert not any(tmp_path.iterdir())
    with pytest.raises(ConfigError, match=r"\(images, channels last\), which no gsolve algorithm takes"):
        resolve_with_origin("CarRacing-v3", use_zoo=False)  # gsolve config, get_config: the same line


def test_an_sb3_algorithm_on_the_core_install_is_refused_in_one_line_before_a_run_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user on the core install (no sb3 extra) ran `gsolve train Pendulum-v1:sac`: a ModuleNotFoundError
    traceback, and a run folder left 'running' that the diagnosis took for a killed process. Now one line, with the
    pip command and our own algorithms that would take the run, and no folder; launcher (MCP start_training) too."""
    import importlib.util

    from gymnasium_solver import launcher

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.split(".")[0] in ("stable_baselines3", "sb3_contrib")
                        else real(name, *a))
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    for config_id, ours in (("Pendulum-v1:sac", "ppo, a2c, reinforce"), ("CartPole-v1:qrdqn", "ppo, a2c, reinforce, dqn")):
        code = cli.main(["train", config_id, "--runs-dir", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert 'which is not installed: pip install "gymnasium-solver[sb3]"' in err and f"({ours})" in err, err
        with pytest.raises(ConfigError, match=r"gymnasium-solver\[sb3\]"):
            launcher.prepare_run(tmp_path, config_id)
    assert not any(tmp_path.iterdir())
    resolve_with_origin("Pendulum-v1:sac")  # `gsolve config` still shows the settings
    assert cli.main(["list-envs"]) == 0  # the presets it lists say which this install cannot train yet
    out = capsys.readouterr().out
    assert 'This install cannot train Pendulum-v1:sac, Pendulum-v1:td3 yet: pip install "gymnasium-solver[sb3]"' in out
    from gymnasium_solver.environment_list import environment_list  # MCP list_environments(env_id=...)

    problems = {v.config_id: v.problem for v in environment_list("Pendulum-v1").variants or []}
    assert problems["Pendulum-v1:ppo"] is None
    assert problems["Pendulum-v1:sac"] == 'this install cannot train it yet: pip install "gymnasium-solver[sb3]"'


@pytest.mark.parametrize("algo, network, words", [
    ("sac", "mlp", ["(4, 84, 84), uint8) observations (images), which sac cannot take",
                    "with network: nature_cnn: ppo, a2c, reinforce"]),
    ("ppo", "mlp", ["which ppo takes with network: nature_cnn only", "normalize_observations=false"]),
])
def test_channels_first_images_need_the_cnn_of_an_on_policy_algorithm(algo: str, network: str,
                                                                      words: list[str]) -> None:
    from gymnasium_solver.config.spaces import EnvSpaces, check_images

    frames = EnvSpaces("Frames-v0", "Box(0, 255, (4, 84, 84), uint8)", "box", "Discrete(2)", "discrete",
                       image="channels_first")
    with pytest.raises(ConfigError) as exc:
        check_images(algo, network, frames)
    assert "\n" not in str(exc.value) and all(w in str(exc.value) for w in words), str(exc.value)
    check_images("ppo", "nature_cnn", frames)  # what trains
    check_images("sac", "mlp", frames._replace(image=None))  # not images: nothing to say


def test_config_origin_round_trips_through_run_json(tmp_path: Path) -> None:
    origin = resolve_with_origin("MountainCar-v0:ppo", ["seed=2"], use_zoo=False).origin
    info = rf.RunInfo(run_id="20260101-000000-abcd", config_id="MountainCar-v0:ppo", env_id="MountainCar-v0",
                      variant="ppo", algo="ppo", seed=2, created_at=rf.utc_now_iso(), updated_at=rf.utc_now_iso(),
                      max_env_steps=1000, config_origin=origin)
    rf.write_run_info(tmp_path, info)
    back = rf.read_run_info(tmp_path)
    assert back == info and back.config_origin is not None and back.config_origin.sources["seed"] == "override"
    # A run.json written before (no config_origin) or by a newer trainer (a source we do not know) still reads.
    raw = json.loads((tmp_path / rf.RUN_JSON).read_text(encoding="utf-8"))
    raw["config_origin"]["sources"]["seed"] = "something_newer"
    raw["config_origin"]["extra"] = 1
    (tmp_path / rf.RUN_JSON).write_text(json.dumps(raw), encoding="utf-8")
    assert rf.read_run_info(tmp_path).config_origin.sources["seed"] == "something_newer"  # type: ignore[union-attr]
    del raw["config_origin"]
    (tmp_path / rf.RUN_JSON).write_text(json.dumps(raw), encoding="utf-8")
    assert rf.read_run_info(tmp_path).config_origin is None


def test_a_short_real_run_of_an_env_without_a_preset_writes_a_valid_folder_and_is_diagnosed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore

    monkeypatch.setenv("GSOLVE_CONFIG", "")  # a developer's own user config must not change the run
    code = cli.main(["train", "MountainCar-v0", "--set", "max_env_steps=3000", "eval_freq=1500", "eval_episodes=2",
                     "--runs-dir", str(tmp_path), "--quiet"])
    out = capsys.readouterr()
    assert code == 3, out.err  # finished unsolved (cli_error.ExitCode.UNSOLVED)
    assert "training with ppo" in out.err and "MountainCar-v0:ppo" in out.out
    run_dir = Path(out.out.strip().splitlines()[-1])
    info = rf.read_run_info(run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.config_id == "MountainCar-v0:ppo"
    assert info.config_origin is not None and info.config_origin.sources["max_env_steps"] == "override"
    assert info.config_origin.settings == ("zoo" if zoo_entry("MountainCar-v0", "ppo") else "default")
    store = RunStore(tmp_path)
    assert store.metric_column(run_dir, rf.M.ENV_STEPS)[0].max() >= 3000
    diagnosis = diagnose_run_dir(store, run_dir)
    assert diagnosis.run_id == info.run_id and diagnosis.findings, diagnosis


def test_presets_save_writes_a_run_as_the_users_own_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = resolve_config("MountainCar-v0:ppo", ["seed=4", "gamma=0.995"], use_zoo=False)
    run = tmp_path / "runs" / "20260101-000000-beef"
    run.mkdir(parents=True)
    (run / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    info = rf.RunInfo(run_id=run.name, config_id=cfg.config_id, env_id=cfg.env_id, variant="ppo", algo="ppo", seed=4,
                      status=rf.RunStatus.COMPLETED, created_at=rf.utc_now_iso(), updated_at=rf.utc_now_iso(),
                      max_env_steps=cfg.max_env_steps)
    rf.write_run_info(run, info)
    presets = tmp_path / "presets"
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    assert cli.main(["presets", "save", "@last", "mine", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert f"MountainCar-v0:mine in {presets / 'MountainCar-v0.yaml'}" in capsys.readouterr().out
    r = resolve_with_origin("MountainCar-v0:mine")
    assert r.origin.settings == "preset" and r.config.model_dump() == {**cfg.model_dump(), "variant": "mine"}
    assert cli.main(["presets", "save", "@last", "mine", "--runs-dir", str(tmp_path / "runs")]) == 2  # exists
    assert "already has a variant 'mine'" in capsys.readouterr().err

    # Saved without $GSOLVE_CONFIG_DIR, into ~/.config/gsolve/presets (here $XDG_CONFIG_HOME's): training reads that
    # folder too, so the saved variant trains by its name with nothing else set.
    monkeypatch.delenv("GSOLVE_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cli.main(["presets", "save", "@last", "mine", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    saved = tmp_path / "xdg" / "gsolve" / "presets"
    assert f"MountainCar-v0:mine in {saved / 'MountainCar-v0.yaml'}" in out and "train it with" not in out
    r = resolve_with_origin("MountainCar-v0:mine")
    assert r.origin.settings == "preset" and r.config.model_dump() == {**cfg.model_dump(), "variant": "mine"}
    # With $GSOLVE_CONFIG_DIR naming another folder, the default one is not read; the error says where it is.
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(ConfigError, match=f"your saved preset MountainCar-v0:mine is in {saved}, .*"
                                          f"GSOLVE_CONFIG_DIR={saved} gsolve train MountainCar-v0:mine"):
        resolve_config("MountainCar-v0:mine")
    with pytest.raises(ConfigError) as other:
        resolve_config("MountainCar-v0:theirs")
    assert "your saved preset" not in str(other.value)


def test_the_default_preset_folder_adds_variants_and_never_replaces_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    """~/.config/gsolve/presets is read without $GSOLVE_CONFIG_DIR, so a preset of ours is never replaced from it: the
    drift gate and every figure train what we ship. Saving one of our names there is refused; a file written by hand
    with one adds its other variants only."""
    from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR, list_variants

    monkeypatch.delenv("GSOLVE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    runs = ["--runs-dir", str(real_runs.runs_dir)]
    assert cli.main(["presets", "save", real_runs.solved, "ppo", *runs]) == 2
    assert "CartPole-v1:ppo is a preset shipped with gsolve" in capsys.readouterr().err
    assert cli.main(["presets", "save", real_runs.solved, "mine", *runs]) == 0
    folder = tmp_path / "gsolve" / "presets"
    text = (folder / "CartPole-v1.yaml").read_text(encoding="utf-8")
    (folder / "CartPole-v1.yaml").write_text(text.replace("  mine:", "  ppo:\n    algo: ppo\n    gamma: 0.5\n  mine:"),
                                             encoding="utf-8")
    assert resolve_with_origin("CartPole-v1:ppo").config == resolve_with_origin(
        "CartPole-v1:ppo", folder=PACKAGE_CONFIG_DIR).config
    assert resolve_config("CartPole-v1:mine").gamma == resolve_config("CartPole-v1:ppo", folder=PACKAGE_CONFIG_DIR).gamma
    assert {"ppo", "mine", "a2c"} <= set(list_variants("CartPole-v1"))


def test_a_users_preset_folder_adds_to_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """$GSOLVE_CONFIG_DIR adds the user's variants to ours: a saved CartPole-v1:mine leaves CartPole-v1:ppo and
    every other shipped preset as they were; a user's variant of one of our names replaces ours, and only it."""
    from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR, is_shipped_variant, list_variants

    ours = resolve_with_origin("CartPole-v1:ppo")
    presets = tmp_path / "presets"
    presets.mkdir()
    mine = {**ours.config.model_dump(mode="json"), "gamma": 0.9}
    mine = {k: v for k, v in mine.items() if k not in ("env_id", "variant")}
    (presets / "CartPole-v1.yaml").write_text(yaml.safe_dump({"variants": {"mine": mine}}), encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    again = resolve_with_origin("CartPole-v1:ppo")
    assert again.config == ours.config and again.origin.settings == "preset"
    assert str(PACKAGE_CONFIG_DIR) in again.origin.where and is_shipped_variant("CartPole-v1:ppo")
    assert resolve_config("LunarLander-v3:ppo").max_env_steps == resolve_config(
        "LunarLander-v3:ppo", folder=PACKAGE_CONFIG_DIR).max_env_steps
    theirs = resolve_with_origin("CartPole-v1:mine")
    assert theirs.config.gamma == 0.9 and str(presets) in theirs.origin.where
    assert not is_shipped_variant("CartPole-v1:mine")
    assert list(list_variants("CartPole-v1")) == [*list_variants("CartPole-v1", PACKAGE_CONFIG_DIR), "mine"]
    assert resolve_config("CartPole-v1").variant == "ppo"  # a bare id trains our PPO variant, as before
    assert cli.main(["list-envs"]) == 0
    listed = capsys.readouterr().out
    assert "CartPole-v1:mine" in listed and "CartPole-v1:ppo" in listed and "LunarLander-v3:ppo" in listed
    # a variant of our name in the user's file replaces ours, and only that one
    (presets / "CartPole-v1.yaml").write_text(yaml.safe_dump({"variants": {"mine": mine, "ppo": mine}}),
                                              encoding="utf-8")
    assert resolve_config("CartPole-v1:ppo").gamma == 0.9 and not is_shipped_variant("CartPole-v1:ppo")
    assert resolve_config("CartPole-v1:dqn") == resolve_config("CartPole-v1:dqn", folder=PACKAGE_CONFIG_DIR)


def test_gsolve_config_prints_each_values_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "MountainCarContinuous-v0:reinforce", "--set", "gamma=0.98"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# settings: default: gsolve's defaults for reinforce with box actions")
    lines = dict(line.rsplit("  # ", 1) for line in out.splitlines() if not line.startswith("#"))
    assert lines["gamma: 0.98"] == "override" and lines["normalize_observations: true"] == "default"
    assert lines["reward_threshold: 90.0"] == "spec"


def test_list_envs_all_says_where_settings_come_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list-envs", "--filter", "mountaincar"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("MountainCar-v0 "))
    assert row.split()[1] == ("zoo" if zoo_entry("MountainCar-v0", "ppo") else "default")


def test_a_page_past_the_last_registered_id_says_which_offsets_exist() -> None:
    """list_environments(registered=true, offset=100000) answered an empty page noted 'registered ids
    100001-100000 of 415', as if the ids had run out; `gsolve list-envs --offset` already said the range."""
    from gymnasium_solver.environment_list import environment_list

    page = environment_list(registered=True, offset=100_000)
    total = page.registered_total
    assert page.registered == [] and total > 0
    assert page.note == f"offset 100000 is past the last of {total} registered ids: use 0..{total - 1}"
    assert environment_list(registered=True, offset=total - 1).note == f"registered ids {total}-{total} of {total}"


# ---------------------------------------------------------------------------------------------
# MCP
# ---------------------------------------------------------------------------------------------
async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return res.is_error, (text if res.is_error else res.structured_content)


@pytest.mark.anyio
async def test_mcp_lists_registered_envs_bounded_and_starts_any_env(tmp_path: Path) -> None:
    from gymnasium_solver import launcher
    from mcp_server.server import create_server

    limits = launcher.StartLimits(max_live_runs=1, max_env_steps=5000, max_n_envs=64)
    async with Client(create_server(tmp_path, limits)) as client:
        failed, envs = await _call(client, "list_environments", {"filter": "MountainCar", "limit": 1})
        assert not failed and envs["registered_total"] == 2 and len(envs["registered"]) == 1
        assert envs["registered"][0]["env_id"] == "MountainCar-v0" and "offset=1" in envs["note"]
        failed, everything = await _call(client, "list_environments", {"registered": True, "limit": 200})
        assert not failed and len(json.dumps(everything)) < 60_000
        failed, cfg = await _call(client, "get_config", {"config_id": "MountainCarContinuous-v0:reinforce"})
        assert not failed and cfg["value_sources"]["normalize_observations"] == "default"
        failed, text = await _call(client, "start_training", {"config_id": "CartPole-v1:sac"})
        assert failed and "sac cannot take" in text
        failed, text = await _call(client, "start_training", {"config_id": "MountainCar-v0"})
        assert failed and "max_env_steps" in text  # the server's budget cap applies to any env
        failed, started = await _call(client, "start_training", {
            "config_id": "MountainCar-v0", "overrides": {"max_env_steps": 512, "eval_freq": 512, "eval_episodes": 1,
                                                         "n_envs": 4}})
        assert not failed and started["started"]["config_id"] == "MountainCar-v0:ppo" and started["started"]["settings_from"]
        failed, text = await _call(client, "start_training", {"config_id": "CartPole-v1:ppo",
                                                              "overrides": {"max_env_steps": 512}})
        assert failed and "live" in text  # the live-run cap too
        failed, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                              "wait_seconds": 60})
        assert not failed and waited["status"]["finished"], waited
    info = rf.read_run_info(tmp_path / started["run_id"])
    assert info.config_origin is not None and math.isfinite(info.progress.env_steps)
