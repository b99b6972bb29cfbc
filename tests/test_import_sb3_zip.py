"""`gsolve import` of a model zip that Stable-Baselines3 saved: its hyperparameters, from the zip's JSON
``data`` entry, mapped onto our keys, without unpickling anything (issue 25 item 6; docs/imports.md).
The zips are saved here by SB3 itself, from a few hundred steps of PPO and SAC."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import yaml

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.imports import ImportError_, import_runs
from gymnasium_solver.imports.mapping import SB3_ZIP_CONFIG
from gymnasium_solver.imports.sb3_zip import load_data


@pytest.fixture(scope="module")
def zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from stable_baselines3 import PPO, SAC
    from stable_baselines3.common.logger import Logger  # learn() without one leaves a /tmp/SB3-* folder

    folder = tmp_path_factory.mktemp("sb3")
    ppo = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, n_epochs=2, learning_rate=1e-3, gamma=0.98,
              gae_lambda=0.9, clip_range=0.25, ent_coef=0.01, seed=3, policy_kwargs={"net_arch": [32, 32]}, device="cpu")
    ppo.set_logger(Logger(folder=None, output_formats=[]))
    ppo.learn(256)
    ppo.save(folder / "CartPole-v1.zip")  # named as the RL Zoo names it: the environment is read from the name
    sac = SAC("MlpPolicy", "Pendulum-v1", buffer_size=1000, learning_starts=50, batch_size=32, tau=0.01,
              ent_coef="auto_0.5", seed=1, policy_kwargs={"net_arch": [16]}, device="cpu")
    sac.set_logger(Logger(folder=None, output_formats=[]))
    sac.learn(200)
    sac.save(folder / "sac_model.zip")
    return {"ppo": folder / "CartPole-v1.zip", "sac": folder / "sac_model.zip"}


def _config(runs: Path, run_id: str) -> dict:
    return yaml.safe_load((runs / run_id / rf.CONFIG_YAML).read_text(encoding="utf-8"))


def test_a_ppo_zip_imports_its_hyperparameters_under_our_keys(zips: dict[str, Path], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    [run] = import_runs([zips["ppo"]], runs).runs
    assert (run.kind, run.config_id, run.algo, run.outcome) == ("sb3_model_zip", "CartPole-v1:sb3-ppo", "ppo", "imported")
    config = _config(runs, run.run_id)
    assert {k: config[k] for k in ("n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda",
                                   "ent_coef", "clip_range", "normalize_advantages", "hidden_sizes", "seed", "n_envs")} \
        == {"n_steps": 64, "batch_size": 32, "n_epochs": 2, "learning_rate": 1e-3, "gamma": 0.98, "gae_lambda": 0.9,
            "ent_coef": 0.01, "clip_range": 0.25, "normalize_advantages": True, "hidden_sizes": [32, 32], "seed": 3,
            "n_envs": 1}
    assert config["max_env_steps"] == 256 and config["sb3_data"]["normalize_advantage"] is True  # SB3's own names kept
    assert config["sb3_serialized"]["lr_schedule"].startswith("<class ") and "policy_class" in config["sb3_serialized"]
    info = rf.read_run_info(runs / run.run_id)
    assert info.read_only and info.source is not None and info.source.files == ["CartPole-v1.zip"]
    assert info.progress.env_steps == 256 and info.metric_columns == [rf.M.ITERATION, rf.M.ENV_STEPS]
    assert "serialized" in info.source.unknown and "metrics" in info.source.unknown
    # Imported again: the same run.
    assert import_runs([zips["ppo"]], runs).runs[0].outcome == "already_imported"


def test_a_sac_zip_maps_its_learned_entropy_coefficient(zips: dict[str, Path], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    [run] = import_runs([zips["sac"]], runs, env_id="Pendulum-v1").runs
    config = _config(runs, run.run_id)
    assert run.algo == "sac" and run.config_id == "Pendulum-v1:sb3-sac"
    assert {k: config[k] for k in ("buffer_size", "learning_starts", "batch_size", "tau", "ent_coef", "ent_coef_auto",
                                   "hidden_sizes", "target_entropy", "gradient_steps")} == \
        {"buffer_size": 1000, "learning_starts": 50, "batch_size": 32, "tau": 0.01, "ent_coef": 0.5,
         "ent_coef_auto": True, "hidden_sizes": [16], "target_entropy": -1.0, "gradient_steps": 1}


def test_every_mapped_key_is_one_of_our_config_keys() -> None:
    from gymnasium_solver.config import CONFIG_KEYS

    assert {ours for ours, _ in SB3_ZIP_CONFIG.values()} <= set(CONFIG_KEYS)


def test_the_cli_imports_a_zip_and_shows_it(zips: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    runs = str(tmp_path / "runs")
    assert cli.main(["import", str(zips["sac"]), "--env", "Pendulum-v1", "--runs-dir", runs, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    run_id = out["runs"][0]["run_id"]
    assert cli.main(["show", run_id, "--runs-dir", runs]) == 0
    assert "sb3_model_zip" in capsys.readouterr().out


def _rewritten(src: Path, dst: Path, data: object | None = None, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for item in z.infolist():
            if item.filename == "data" and data is not None:
                out.writestr(item, json.dumps(data) if not isinstance(data, bytes) else data)
            else:
                out.writestr(item, z.read(item.filename))
        for name, content in (extra or {}).items():
            out.writestr(name, content)
    return dst


def test_what_is_not_sb3s_zip_gets_one_sentence(zips: dict[str, Path], tmp_path: Path) -> None:
    not_zip = tmp_path / "CartPole-v1.zip"
    not_zip.write_bytes(b"not a zip at all")
    no_data = tmp_path / "c.zip"
    with zipfile.ZipFile(no_data, "w") as z:
        z.writestr("policy.pth", b"")
    cases = [("not a readable zip", not_zip),
             ("is not JSON", _rewritten(zips["ppo"], tmp_path / "a.zip", b"{nope")),
             ("holds list", _rewritten(zips["ppo"], tmp_path / "b.zip", [1, 2])),
             ("has no 'data' entry", no_data),
             ("is not JSON", _rewritten(zips["ppo"], tmp_path / "d.zip", b"[" * 100_000 + b"]" * 100_000))]
    for expected, path in cases:
        with pytest.raises(ImportError_, match=expected) as info:
            import_runs([path], tmp_path / "runs", env_id="CartPole-v1")
        assert "\n" not in str(info.value)
    link = tmp_path / "link.zip"
    link.symlink_to(zips["ppo"])
    with pytest.raises(ImportError_, match="symbolic link"):
        import_runs([link], tmp_path / "runs")


def test_a_data_entry_that_inflates_past_the_limit_is_refused(zips: dict[str, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from gymnasium_solver.imports import sb3_zip

    monkeypatch.setattr(sb3_zip, "MAX_DATA_BYTES", 1000)
    with pytest.raises(ImportError_, match="more than the"):
        load_data(zips["ppo"])


def test_wrongly_typed_values_are_noted_not_mapped(zips: dict[str, Path], tmp_path: Path) -> None:
    with zipfile.ZipFile(zips["ppo"]) as z:
        data = json.loads(z.read("data"))
    data.update(gamma="0.99; rm -rf /", n_steps=True, batch_size=3.5)
    path = _rewritten(zips["ppo"], tmp_path / "CartPole-v1.zip", data)
    [run] = import_runs([path], tmp_path / "runs").runs
    config = _config(tmp_path / "runs", run.run_id)
    assert "gamma" not in config and "n_steps" not in config and "batch_size" not in config
    assert {"sb3 gamma", "sb3 n_steps", "sb3 batch_size"} <= set(run.unknown)
