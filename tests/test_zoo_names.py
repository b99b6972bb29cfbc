"""The RL Zoo's and SB3's config names (issue 22 item 2): accepted by --set, presets (ours and a user's
folder), retry and MCP start_training, read into ours through one table (config/zoo_names.py) that the
Zoo's hyperparams reader and the imports use too; every output shows our names; a name and ours for the
same key together, or a value we cannot reproduce, is refused in one sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from corpus_util import copy_case
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import CONFIG_KEYS, ConfigError, resolve_config, resolve_with_origin
from gymnasium_solver.config import zoo as zoo_mod
from gymnasium_solver.config import zoo_names as zn
from gymnasium_solver.config.zoo import zoo_entry
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.imports import mapping
from gymnasium_solver.imports.sb3_zip import ZipData, map_config

# (config id, --set, the keys of ours it sets and their values)
ALIASES: list[tuple[str, str, dict[str, Any]]] = [
    ("CartPole-v1:ppo", "n_timesteps=50000", {"max_env_steps": 50_000}),
    ("CartPole-v1:ppo", "n_timesteps=1e5", {"max_env_steps": 100_000}),  # YAML 1.1 reads 1e5 as text
    ("CartPole-v1:ppo", "total_timesteps=60000", {"max_env_steps": 60_000}),
    ("CartPole-v1:ppo", "policy_kwargs.net_arch=[32, 32]", {"hidden_sizes": [32, 32]}),
    ("CartPole-v1:ppo", "policy_kwargs=dict(net_arch=[64, 64])", {"hidden_sizes": [64, 64]}),
    ("CartPole-v1:ppo", "policy_kwargs={net_arch: {pi: [16], vf: [16]}}", {"hidden_sizes": [16]}),
    ("CartPole-v1:ppo", "policy_kwargs.activation_fn=nn.ReLU", {"activation": "relu"}),
    ("Pendulum-v1:ppo", "policy_kwargs.log_std_init=-1.5", {"log_std_init": -1.5}),
    ("CartPole-v1:qrdqn", "policy_kwargs.n_quantiles=20", {"n_quantiles": 20}),
    ("CartPole-v1:ppo", "normalize_advantage=false", {"normalize_advantages": False}),
    ("CartPole-v1:ppo", "normalize=true", {"normalize_observations": True}),
    ("CartPole-v1:ppo", "learning_rate=lin_0.001", {"learning_rate": {"start": 0.001, "end": 0.0}}),
    ("CartPole-v1:ppo", "clip_range=lin_0.2", {"clip_range": {"start": 0.2, "end": 0.0}}),
    ("CartPole-v1:ppo", "ent_coef=lin_0.01", {"ent_coef": {"start": 0.01, "end": 0.0}}),
    ("Pendulum-v1:sac", "ent_coef=auto_0.1", {"ent_coef_auto": True, "ent_coef": 0.1}),
    ("CartPole-v1:dqn", "train_freq=[4, step]", {"train_freq": 4}),
    ("CartPole-v1:ppo", "policy=MlpPolicy", {}),
    ("CartPole-v1:a2c", "use_rms_prop=true", {}),
]


@pytest.mark.parametrize(("config_id", "pair", "expected"), ALIASES, ids=[a[1] for a in ALIASES])
def test_each_zoo_name_through_set_is_read_into_ours_and_noted(config_id: str, pair: str,
                                                                expected: dict[str, Any]) -> None:
    r = resolve_with_origin(config_id, [pair])
    dumped = r.config.model_dump(mode="json")
    assert {k: dumped[k] for k in expected} == expected
    assert all(r.origin.sources[k] == "override" for k in expected)
    name = pair.split("=", 1)[0]
    assert any(n.startswith(f"--set: {name}") for n in r.origin.notes), r.origin.notes
    assert name not in dumped or name in CONFIG_KEYS  # the resolved config has our names only


def test_sb3s_own_names_are_ours() -> None:
    """SB3's constructor arguments that the issue names are our keys as they are: nothing to map."""
    cfg = resolve_config("CartPole-v1:dqn", ["learning_starts=500", "target_update_interval=1000",
                                             "exploration_final_eps=0.02", "gradient_steps=2", "n_envs=2"])
    assert (cfg.learning_starts, cfg.target_update_interval, cfg.exploration_final_eps, cfg.gradient_steps,  # type: ignore[union-attr]
            cfg.n_envs) == (500, 1000, 0.02, 2, 2)
    ppo = resolve_config("CartPole-v1:ppo", ["ent_coef=0.01", "n_steps=64", "vf_coef=0.4", "n_envs=8"])
    assert (ppo.ent_coef, ppo.n_steps, ppo.vf_coef, ppo.n_envs) == (0.01, 64, 0.4, 8)  # type: ignore[union-attr]


def test_every_key_of_the_installed_zoo_is_ours_or_in_the_table() -> None:
    folder = zoo_mod.zoo_hyperparams_dir()
    if folder is None:
        pytest.skip("rl_zoo3 is not installed")
    for algo in zoo_mod.ZOO_ALGOS:
        for env_id, entry in yaml.safe_load((folder / f"{algo}.yml").read_text()).items():
            unknown = [k for k in (entry if isinstance(entry, dict) else {}) if k not in CONFIG_KEYS and k not in zn.ZOO_NAMES]
            assert not unknown, (algo, env_id, unknown)


@pytest.mark.parametrize(("pairs", "words"), [
    (["n_timesteps=5000", "max_env_steps=6000"], ["n_timesteps and max_env_steps both set max_env_steps", "ambiguous"]),
    (["n_timesteps=5000", "total_timesteps=6000"], ["n_timesteps and total_timesteps", "are read as max_env_steps"]),
    (["normalize=true", "normalize_observations=false"], ["normalize and normalize_observations"]),
    (["policy_kwargs.activation_fn=nn.ReLU", "activation=tanh"], ["policy_kwargs and activation both set activation"]),
])
def test_a_zoo_name_and_ours_for_the_same_key_together_are_refused(pairs: list[str], words: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        resolve_config("CartPole-v1:ppo", pairs)
    text = str(exc.value)
    assert "\n" not in text and text.startswith("--set: ") and all(w in text for w in words), text


@pytest.mark.parametrize(("pair", "words"), [
    ("learning_rate=exp_0.001", ["learning_rate=exp_0.001", "schedules are linear", "lin_x"]),
    ("learning_rate=lin_fast", ["learning_rate=lin_fast", "lin_ takes a number"]),
    ("frame_stack=4", ["frame_stack=4", "atari_wrappers=true"]),
    ("env_wrapper=gymnasium.wrappers.TimeAwareObservation", ["env_wrapper", "register a wrapped environment"]),
    ("noise_type=ornstein-uhlenbeck", ["noise_type=ornstein-uhlenbeck", "Gaussian noise only", "action_noise_std"]),
    ("train_freq=[1, episode]", ["train_freq", "not episodes"]),
    ("policy_kwargs.net_arch={pi: [64], vf: [32]}", ["policy_kwargs.net_arch", "one hidden_sizes for both"]),
    ("policy_kwargs=dict(optimizer_class=RMSprop)", ["policy_kwargs.optimizer_class", "hidden_sizes (net_arch)"]),
    ("policy_kwargs=dict(x=open('f', 'w'))", ["policy_kwargs", "not plain data"]),
    ("policy_kwargs.activation_fn=nn.ELU", ["activation_fn", "tanh and relu"]),
    ("policy=MultiInputPolicy", ["policy=MultiInputPolicy", "MlpPolicy"]),
    ("use_rms_prop=false", ["use_rms_prop", "RMSprop"]),
    ("n_timesteps=1000.5", ["n_timesteps", "whole number"]),
])
def test_what_cannot_be_mapped_is_refused_naming_the_key_and_what_would_work(pair: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        resolve_config("CartPole-v1:ppo", [pair])
    text = str(exc.value)
    assert "\n" not in text and "cannot be mapped onto gsolve's keys" in text and all(w in text for w in words), text


def test_a_dict_in_our_own_schedule_key_is_ours() -> None:
    """learning_rate.end=... is a dotted part of our schedule, not the Zoo's form of a value."""
    cfg = resolve_config("CartPole-v1:ppo", ["learning_rate.end=0.0001", "n_timesteps=30000"])
    assert cfg.learning_rate.end == 0.0001 and cfg.max_env_steps == 30_000  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# The CLI: notes on stderr, our names in config.yaml, run.json and --json
# ---------------------------------------------------------------------------------------------
def test_gsolve_config_shows_our_names_and_what_was_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "CartPole-v1:ppo", "--set", "n_timesteps=50000", "policy_kwargs.net_arch=[32]"]) == 0
    out = capsys.readouterr().out
    assert "# note: --set: n_timesteps -> max_env_steps" in out and "max_env_steps: 50000  # override" in out
    assert "hidden_sizes: [32]  # override" in out
    assert not [line for line in out.splitlines() if line.startswith(("n_timesteps", "policy_kwargs"))]
    assert cli.main(["config", "CartPole-v1:ppo", "--set", "n_timesteps=50000", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)  # --json stays one JSON document
    assert result["config"]["max_env_steps"] == 50_000 and "n_timesteps" not in result["config"]
    assert "--set: n_timesteps -> max_env_steps" in result["notes"]


def test_gsolve_train_with_zoo_names_records_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert cli.main(["train", "CartPole-v1:ppo", "--set", "n_timesteps=1024", "n_envs=4", "n_steps=64",
                     "batch_size=64", "eval_freq=512", "eval_episodes=2", "policy_kwargs=dict(net_arch=[16])", "--quiet", "--json",
                     "--no-fail", "--runs-dir", str(runs)]) == 0
    captured = capsys.readouterr()
    details = json.loads(captured.out)  # the note went to stderr: stdout is the JSON document
    assert "note: --set: n_timesteps -> max_env_steps" in captured.err
    run_dir = runs / details["summary"]["run_id"]
    info = rf.read_run_info(run_dir)
    assert info.overrides == {"max_env_steps": 1024, "n_envs": 4, "n_steps": 64, "batch_size": 64, "eval_freq": 512,
                              "eval_episodes": 2, "hidden_sizes": [16]}
    assert info.config_origin is not None and "--set: n_timesteps -> max_env_steps" in info.config_origin.notes
    config = yaml.safe_load((run_dir / rf.CONFIG_YAML).read_text())
    assert config["max_env_steps"] == 1024 and config["hidden_sizes"] == [16] and "n_timesteps" not in config


def test_retry_set_takes_zoo_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = copy_case("healthy_s1", tmp_path)
    assert cli.main(["retry", run_id, "--dry-run", "--json", "--set", "n_timesteps=30000",
                     "--runs-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    plan = json.loads(captured.out)
    assert plan["your_overrides"] == {"max_env_steps": 30_000} and plan["overrides"]["max_env_steps"] == 30_000
    assert "--set max_env_steps=30000" in plan["command"] and "n_timesteps" not in plan["command"]
    assert "gsolve retry: note: --set: n_timesteps -> max_env_steps" in captured.err
    assert cli.main(["retry", run_id, "--dry-run", "--set", "n_timesteps=30000", "max_env_steps=1",
                     "--runs-dir", str(tmp_path)]) == 2
    assert "ambiguous" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Presets: a user's folder (GSOLVE_CONFIG_DIR)
# ---------------------------------------------------------------------------------------------
def _user_preset(folder: Path, variants: dict[str, Any], base: dict[str, Any] | None = None) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "CartPole-v1.yaml").write_text(yaml.safe_dump({"base": base or {}, "variants": variants}, sort_keys=False))


def test_a_users_preset_in_zoo_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path))
    _user_preset(tmp_path, base={"n_timesteps": 40_000, "max_grad_norm": 0.5}, variants={
        "zoo": {"algo": "ppo", "learning_rate": "lin_0.003", "n_envs": 8, "n_steps": 32, "batch_size": 256,
                "policy_kwargs": "dict(net_arch=dict(pi=[64, 64], vf=[64, 64]), activation_fn=nn.ReLU, ortho_init=False)"},
        "longer": {"inherits": "zoo", "max_env_steps": 80_000},  # ours over the Zoo name of the base: no conflict
    })
    r = resolve_with_origin("CartPole-v1:zoo")
    cfg = r.config
    assert (cfg.max_env_steps, cfg.hidden_sizes, cfg.activation) == (40_000, [64, 64], "relu")
    assert cfg.learning_rate.start == 0.003 and cfg.learning_rate.end == 0.0  # type: ignore[union-attr]
    base_note = f"{tmp_path / 'CartPole-v1.yaml'} (base): n_timesteps -> max_env_steps"
    assert base_note in r.origin.notes and any("policy_kwargs.ortho_init -> ortho_init" in n for n in r.origin.notes)
    assert cfg.ortho_init is False
    assert r.origin.sources["max_env_steps"] == "preset"
    longer = resolve_with_origin("CartPole-v1:longer")
    assert longer.config.max_env_steps == 80_000 and longer.config.hidden_sizes == [64, 64]
    assert base_note in longer.origin.notes  # the base it inherits wrote it


def test_a_preset_section_with_both_names_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path))
    _user_preset(tmp_path, {"ppo": {"algo": "ppo", "n_timesteps": 1000, "max_env_steps": 2000}})
    with pytest.raises(ConfigError) as exc:
        resolve_config("CartPole-v1:ppo")
    text = str(exc.value)
    assert "CartPole-v1.yaml (variant 'ppo'): n_timesteps and max_env_steps both set max_env_steps" in text
    _user_preset(tmp_path, {"ppo": {"algo": "ppo", "frame_stack": 4}})
    with pytest.raises(ConfigError, match=r"\(variant 'ppo'\): frame_stack=4 cannot be mapped"):
        resolve_config("CartPole-v1:ppo")


def test_the_shipped_presets_resolve_as_before() -> None:
    """Our own presets are in our names: reading them through the table changes nothing and notes nothing."""
    r = resolve_with_origin("CartPole-v1:ppo")
    assert not [n for n in r.origin.notes if "->" in n]


# ---------------------------------------------------------------------------------------------
# MCP start_training
# ---------------------------------------------------------------------------------------------
async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return res.is_error, (text if res.is_error else res.structured_content)


@pytest.mark.anyio
async def test_mcp_start_training_validates_zoo_names_and_records_ours(tmp_path: Path) -> None:
    from mcp_server.server import create_server

    limits = launcher.StartLimits(max_live_runs=1, max_env_steps=5000, max_n_envs=8)
    async with Client(create_server(tmp_path, limits)) as client:
        failed, text = await _call(client, "start_training", {"config_id": "CartPole-v1:ppo",
                                                              "overrides": {"n_timesteps": 20_000_000}})
        assert failed and "max_env_steps=20,000,000" in text  # the budget cap sees the Zoo's name as ours
        failed, text = await _call(client, "start_training", {"config_id": "CartPole-v1:ppo", "overrides": {
            "n_timesteps": 1000, "max_env_steps": 2000}})
        assert failed and "ambiguous" in text
        failed, text = await _call(client, "start_training", {"config_id": "CartPole-v1:ppo",
                                                              "overrides": {"learning_rate": "exp_0.1"}})
        assert failed and "learning_rate=exp_0.1 cannot be mapped" in text
        failed, cfg = await _call(client, "get_config", {"config_id": "CartPole-v1:ppo"})
        assert not failed and "n_timesteps" not in cfg["config"]
        failed, started = await _call(client, "start_training", {"config_id": "CartPole-v1:ppo", "overrides": {
            "n_timesteps": 512, "eval_freq": 512, "eval_episodes": 1, "n_envs": 4, "n_steps": 32, "batch_size": 64,
            "policy_kwargs": {"net_arch": [16]}}})
        assert not failed, started
        assert started["started"]["overrides"]["max_env_steps"] == 512 and "n_timesteps" not in started["started"]["overrides"]
        assert started["started"]["overrides"]["hidden_sizes"] == [16]
        assert "overrides: n_timesteps -> max_env_steps" in started["started"]["config_notes"]  # a tool's own terms
        failed, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                              "wait_seconds": 60})
        assert not failed and waited["status"]["finished"], waited
    info = rf.read_run_info(tmp_path / started["run_id"])
    assert info.overrides["max_env_steps"] == 512 and "n_timesteps" not in info.overrides


def test_prepare_run_records_overrides_in_our_names(tmp_path: Path) -> None:
    prep = launcher.prepare_run(tmp_path, "CartPole-v1:ppo", {"n_timesteps": 2048, "normalize_advantage": False})
    assert prep.placeholder.overrides == {"max_env_steps": 2048, "normalize_advantages": False}
    assert prep.config.max_env_steps == 2048


# ---------------------------------------------------------------------------------------------
# One table: the Zoo's hyperparams reader and the imports read through it
# ---------------------------------------------------------------------------------------------
def test_the_zoo_reader_and_set_read_through_the_same_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name added to the table is understood by the Zoo's hyperparams reader and by --set alike."""
    monkeypatch.setitem(zn.ZOO_NAMES, "budget_steps", zn.ZooName(("max_env_steps",),
                                                                  zn._steps("budget_steps", "max_env_steps"), "test"))
    settings, refused, _ = zoo_mod._settings("ppo", {"budget_steps": 3e4})
    assert settings["max_env_steps"] == 30_000 and not refused
    assert resolve_config("CartPole-v1:ppo", ["budget_steps=30000"]).max_env_steps == 30_000
    # and the Zoo's entry refuses what --set refuses, with the table's sentence
    _, refused, _ = zoo_mod._settings("ppo", {"frame_stack": 4})
    with pytest.raises(zn.Unmappable) as why:
        zn.ZOO_NAMES["frame_stack"].read(4)
    assert refused == [f"frame_stack: 4 ({why.value})"]


def test_the_imports_take_their_names_from_the_table() -> None:
    for attr, (ours, _) in mapping.SB3_ZIP_CONFIG.items():
        assert ours == zn.our_key(attr.removeprefix("_")) and ours in CONFIG_KEYS, attr
    assert mapping.SB3_ZIP_CONFIG["_total_timesteps"][0] == "max_env_steps"
    assert mapping.SB3_ZIP_CONFIG["normalize_advantage"][0] == "normalize_advantages"
    assert mapping.CONFIG_ALIASES[mapping.Framework.SB3]["n_timesteps"] == "max_env_steps"
    # an SB3 zip's policy_kwargs and an RL Zoo config.yml read through the table's readers
    ours, notes = map_config(ZipData({"policy_kwargs": {"net_arch": {"pi": [32, 32], "vf": [32, 32]}}}, None))
    assert ours == {"hidden_sizes": [32, 32]} and not notes
    _, notes = map_config(ZipData({"policy_kwargs": {"net_arch": {"pi": [32], "vf": [8]}}}, None))
    assert "one hidden_sizes for both" in notes["policy_kwargs.net_arch"]
    view = mapping.config_view({"n_timesteps": 1e5, "learning_rate": "lin_0.001", "normalize": "true",
                                "policy_kwargs": "dict(net_arch=[64])"}, "sb3")
    assert (view["max_env_steps"], view["learning_rate"], view["normalize_observations"], view["hidden_sizes"]) == (
        100_000, {"start": 0.001, "end": 0.0}, True, [64])
    assert mapping.source_setting("sb3", "max_env_steps=1000") == "n_timesteps=1000"


def test_no_other_module_maps_a_zoo_name_onto_ours() -> None:
    """No second copy of the table: outside config/zoo_names.py no module pairs a Zoo / SB3 name with our key
    for it (``"n_timesteps": "max_env_steps"``), except CleanRL's own argument table, whose total_timesteps
    happens to be SB3's name too."""
    root = Path(__file__).resolve().parent.parent / "gymnasium_solver"
    cleanrl = mapping.CONFIG_ALIASES[mapping.Framework.CLEANRL]
    pairs = [(name.rsplit(".", 1)[-1], entry.ours[0]) for name, entry in zn.ZOO_NAMES.items() if entry.rename]
    assert ("n_timesteps", "max_env_steps") in pairs and ("net_arch", "hidden_sizes") in pairs
    for path in root.rglob("*.py"):
        if path.name == "zoo_names.py":
            continue
        text = path.read_text()
        for theirs, ours in pairs:
            found = len(re.findall(rf'"{theirs}"\s*:\s*\(?\s*"{ours}"', text))
            allowed = 1 if path.name == "mapping.py" and cleanrl.get(theirs) == ours else 0
            assert found <= allowed, (path, theirs, ours)


def test_the_docs_show_the_table() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "configs.md").read_text()
    assert zn.markdown_table() in docs, "docs/configs.md's table of the Zoo's names differs from config/zoo_names.py"


def test_the_zoos_td3_noise_is_read_in_action_units() -> None:
    """Every TD3 entry of the Zoo writes noise_type: normal with noise_std in action units (SB3's NormalActionNoise
    sigma); ours is a fraction of the half-range. They were refused, so no Zoo TD3 entry trained."""
    r = resolve_with_origin("Pendulum-v1:td3", ["noise_type=normal", "noise_std=0.2"])  # actions in [-2, 2]
    assert r.config.action_noise_std == pytest.approx(0.1)  # type: ignore[union-attr]
    assert any("action_noise_std=0.1 (Pendulum-v1's actions have a half-range of 2" in n for n in r.origin.notes)
    if zoo_entry("Humanoid-v4", "td3") is None:
        pytest.skip("rl_zoo3 is not installed")
    pytest.importorskip("mujoco")
    r = resolve_with_origin("Humanoid-v5:td3")  # the Zoo's Humanoid-v4 entry: noise_std 0.1, actions in [-0.4, 0.4]
    assert r.origin.settings == "zoo" and r.config.action_noise_std == pytest.approx(0.25)  # type: ignore[union-attr]
    r = resolve_with_origin("HalfCheetah-v5:td3")  # actions in [-1, 1]: the same number
    assert r.config.action_noise_std == pytest.approx(0.1) and r.origin.sources["action_noise_std"] == "zoo"  # type: ignore[union-attr]
