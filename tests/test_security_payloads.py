"""Nothing in a run folder or an import is unpickled or executed (issue 26, item 1).

Every file type we read gets a planted payload that, if unpickled or imported, creates a marker
file: the checkpoint .pt itself, the Stable-Baselines3 zip inside an SB3 checkpoint (its ``data``
JSON and its ``policy.pth``), a DQN replay buffer in a resumable checkpoint, config.yaml and the
checkpoint's embedded config (YAML python tags), an environment id naming a module, and the import
sources (evaluations.npz, the RL Zoo's config.yml, a CleanRL event file's hyperparameters). The real
entry points (gsolve eval in-process and as a subprocess, promotion, MCP promote_run, resume, import)
run on them; the marker never appears, and what is refused is refused in one sentence. The liveness
tests show each payload does run when loaded the unsafe way, so a pass means something.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from mcp import Client
from shared_util import stop_after

from gymnasium_solver.cli import app as cli
from gymnasium_solver.cli.train import evaluate_checkpoint
from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.imports import ImportError_, import_runs
from gymnasium_solver.ops import promotion
from gymnasium_solver.train import training
from gymnasium_solver.train.checkpoints import checkpoint_config, checkpoint_path, load_checkpoint
from gymnasium_solver.train.resume import plan_resume, start_resume
from mcp_server.server import create_server

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
GSOLVE = Path(sys.executable).with_name("gsolve")
# A few hundred env steps with gradient steps from the start, on a tiny network (about a second each).
TINY_SB3 = ["n_envs=1", "max_env_steps=400", "eval_freq=200", "iteration_steps=200", "learning_starts=50",
            "train_freq=4", "gradient_steps=1", "hidden_sizes=[16]", "eval_episodes=2", "batch_size=32",
            "reward_threshold=1000000"]
SB3_RUNS = {"sac": ("Pendulum-v1:sac", []), "td3": ("Pendulum-v1:sac", ["algo=td3"]),
            "tqc": ("Pendulum-v1:sac", ["algo=tqc"]), "qrdqn": ("CartPole-v1:dqn", ["algo=qrdqn"])}
REFUSED_PICKLE = "holds Python objects that only unpickling could rebuild"


class Payload:
    """Unpickled, it creates ``marker``: what a planted object in a shared run folder would do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return os.system, (f"touch '{self.marker}'",)


def one_sentence(message: str) -> None:
    assert "\n" not in message.strip() and "Traceback" not in message, message


# -- run folders to plant in ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def sb3_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    runs = tmp_path_factory.mktemp("genuine")
    return {name: training.train(resolve_config(cid, [*TINY_SB3, *extra]), runs).run_dir
            for name, (cid, extra) in SB3_RUNS.items()}


@pytest.fixture(scope="module")
def stopped_dqn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stopped DQN run: its last.pt holds the replay buffer a resume continues from."""
    cfg = resolve_config("CartPole-v1:dqn", ["max_env_steps=2000", "iteration_steps=200", "eval_freq=1000",
                                             "eval_episodes=2", "learning_starts=100", "reward_threshold=1000",
                                             "last_checkpoint_seconds=0"])
    mp = pytest.MonkeyPatch()
    mp.setattr(training, "stop_on_signals", lambda: stop_after(2))
    try:
        result = training.train(cfg, tmp_path_factory.mktemp("dqn"))
    finally:
        mp.undo()
    assert result.status == rf.RunStatus.STOPPED
    return result.run_dir


def copy_run(run_dir: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "runs" / run_dir.name
    shutil.copytree(run_dir, dst)
    return dst


def edit_checkpoint(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    payload = torch.load(path, weights_only=True)
    edit(payload)
    torch.save(payload, path)


def rewrite_zip(raw: bytes, member: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, content if item.filename == member else src.read(item.filename))
    return out.getvalue()


def planted_zip(saved: torch.Tensor, member: str, marker: Path) -> torch.Tensor:
    """SB3's zip with ``member`` carrying the payload: ``data`` as SB3 serialises an object (base64
    cloudpickle under ':serialized:', which SB3's load unpickles), ``policy.pth`` as a pickled object."""
    raw = saved.numpy().tobytes()
    if member == "data":
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            data = json.loads(z.read("data"))
        data["policy_class"][":serialized:"] = base64.b64encode(pickle.dumps(Payload(marker))).decode()
        content = json.dumps(data).encode()
    else:
        buffer = io.BytesIO()
        torch.save({"weights": Payload(marker)}, buffer)
        content = buffer.getvalue()
    return torch.frombuffer(bytearray(rewrite_zip(raw, member, content)), dtype=torch.uint8)


def plant_sb3_zip(run_dir: Path, member: str, marker: Path) -> None:
    for name in (rf.BEST_CHECKPOINT, rf.LAST_CHECKPOINT):
        edit_checkpoint(checkpoint_path(run_dir, name),
                        lambda p: p.update(sb3_model=planted_zip(p["sb3_model"], member, marker)))


# -- the payloads are live: loaded the unsafe way, each one runs -----------------------------------

def test_each_payload_runs_when_loaded_the_unsafe_way(sb3_runs: dict[str, Path], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import gymnasium as gym
    from stable_baselines3 import SAC

    marker = tmp_path / "PWNED"
    pickle.loads(pickle.dumps(Payload(marker)))
    assert marker.exists()
    marker.unlink()
    saved = torch.load(checkpoint_path(sb3_runs["sac"], rf.BEST_CHECKPOINT), weights_only=True)["sb3_model"]
    with contextlib.suppress(Exception):  # the payload returns os.system's 0 where SB3 expects a class
        SAC.load(io.BytesIO(planted_zip(saved, "data", marker).numpy().tobytes()), device="cpu")
    assert marker.exists(), "SB3's own .load() unpickles the zip's data: the hole issue 26 reported"
    marker.unlink()
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))
    gym.make("gsolve_planted_env:Pendulum-v1").close()  # and then makes Pendulum-v1 as if nothing happened
    assert marker.exists(), "Gymnasium imports the module a 'module:EnvId' id names"


# -- SB3 checkpoints -----------------------------------------------------------------------------

@pytest.mark.parametrize("algo", list(SB3_RUNS))
def test_a_genuine_sb3_run_reloads_safely_to_the_same_actions(sb3_runs: dict[str, Path], algo: str) -> None:
    """The policy rebuilt from our config and its weights acts as SB3's own .load() of the same (trusted) zip."""
    from gymnasium_solver.agents.sb3 import sb3_class

    path = checkpoint_path(sb3_runs[algo], rf.BEST_CHECKPOINT)
    cfg = checkpoint_config(path)
    env = make_vec_env(cfg, 2)
    try:
        spec = space_spec(env)
    finally:
        env.close()
    loaded = load_checkpoint(path, spec)
    saved = torch.load(path, weights_only=True)["sb3_model"]
    reference = sb3_class(cfg.algo).load(io.BytesIO(saved.numpy().tobytes()), device="cpu")
    obs = np.random.default_rng(0).normal(size=(64, *spec.observation_shape)).astype(np.float32)
    expected, _ = reference.predict(obs, deterministic=True)
    np.testing.assert_array_equal(loaded.policy.act(obs, None, deterministic=True).env_actions, expected)
    assert evaluate_checkpoint(path, 2, 0).result.episodes == 2


@pytest.mark.parametrize("member", ["data", "policy.pth"])
def test_a_payload_in_the_sb3_zip_never_runs(sb3_runs: dict[str, Path], tmp_path: Path, member: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The zip is never read: eval and promotion act on the weights beside it, and the payload stays inert."""
    run_dir = copy_run(sb3_runs["sac"], tmp_path)
    marker = tmp_path / "PWNED"
    plant_sb3_zip(run_dir, member, marker)
    assert cli.main(["eval", run_dir.name, "--runs-dir", str(run_dir.parent), "--episodes", "2"]) == 0
    assert "over 2 episodes" in capsys.readouterr().out
    decision = promotion.promote(run_dir.parent, run_dir.name, episodes=2)
    assert decision.evaluation is not None, decision.checks  # re-evaluated (rejected: the run did not solve)
    assert not marker.exists()


def test_gsolve_eval_subprocess_on_a_planted_sb3_zip(sb3_runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = copy_run(sb3_runs["sac"], tmp_path)
    marker = tmp_path / "PWNED"
    plant_sb3_zip(run_dir, "data", marker)
    proc = subprocess.run([str(GSOLVE), "eval", run_dir.name, "--runs-dir", str(run_dir.parent), "--episodes", "2"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "over 2 episodes" in proc.stdout, proc.stderr
    assert "Traceback" not in proc.stderr and not marker.exists()


@pytest.mark.anyio
async def test_mcp_promote_run_on_a_planted_sb3_zip(sb3_runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = copy_run(sb3_runs["sac"], tmp_path)
    marker = tmp_path / "PWNED"
    plant_sb3_zip(run_dir, "data", marker)
    async with Client(create_server(run_dir.parent)) as client:
        res = await client.call_tool("promote_run", {"run_id": run_dir.name, "episodes": 2})
    assert not res.is_error and res.structured_content is not None, res
    assert res.structured_content["evaluation"] is not None and not marker.exists()


# -- the checkpoint file itself ------------------------------------------------------------------

@pytest.mark.parametrize("where", ["model", "whole_file"])
def test_a_pickled_object_in_a_checkpoint_is_refused_in_one_sentence(
        sb3_runs: dict[str, Path], tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = copy_run(sb3_runs["sac"], tmp_path)
    marker = tmp_path / "PWNED"
    path = checkpoint_path(run_dir, rf.BEST_CHECKPOINT)
    if where == "model":
        edit_checkpoint(path, lambda p: p["model"].update(planted=Payload(marker)))
    else:  # a plain pickle (torch's legacy format) in place of the checkpoint
        path.write_bytes(pickle.dumps({"format": 1, "model": Payload(marker)}))
    with pytest.raises(ValueError, match=REFUSED_PICKLE) as info:
        evaluate_checkpoint(path, 2, 0)
    one_sentence(str(info.value))
    assert f"run {run_dir.name}: checkpoints/best.pt" in str(info.value)
    assert cli.main(["eval", run_dir.name, "--runs-dir", str(run_dir.parent), "--episodes", "2"]) != 0
    err = capsys.readouterr().err
    assert REFUSED_PICKLE in err
    one_sentence(err)
    decision = promotion.promote(run_dir.parent, run_dir.name, episodes=2)
    assert decision.evaluation is None and any(REFUSED_PICKLE in c.detail for c in decision.checks)
    assert not marker.exists()


def test_a_payload_in_a_dqn_replay_buffer_is_refused(stopped_dqn: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = copy_run(stopped_dqn, tmp_path)
    marker = tmp_path / "PWNED"
    edit_checkpoint(checkpoint_path(run_dir, rf.LAST_CHECKPOINT),
                    lambda p: p["training"]["optimizer"]["buffer"].update(obs=Payload(marker)))
    plan_resume(run_dir)  # the plan reads metadata only; the trainer reads the checkpoint
    with pytest.raises(ValueError, match=REFUSED_PICKLE) as info:
        training.resume(run_dir)
    one_sentence(str(info.value))
    assert cli.main(["train", "--resume", run_dir.name, "--runs-dir", str(run_dir.parent), "--quiet"]) != 0
    one_sentence(capsys.readouterr().err)
    assert not marker.exists()


# -- YAML and environment ids ----------------------------------------------------------------------

def python_tag(marker: Path) -> str:
    return f"!!python/object/apply:os.system [\"touch '{marker}'\"]"


def test_python_tags_in_config_yaml_are_refused(stopped_dqn: Path, sb3_runs: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "PWNED"
    run_dir = copy_run(stopped_dqn, tmp_path)
    (run_dir / rf.CONFIG_YAML).write_text(f"env_id: {python_tag(marker)}\n")
    with pytest.raises(ValueError) as info:
        plan_resume(run_dir)
    one_sentence(str(info.value))
    cli.main(["show", run_dir.name, "--runs-dir", str(run_dir.parent)])
    assert "Traceback" not in capsys.readouterr().err
    sac = copy_run(sb3_runs["sac"], tmp_path)
    path = checkpoint_path(sac, rf.BEST_CHECKPOINT)
    edit_checkpoint(path, lambda p: p.update(config_yaml=f"algo: {python_tag(marker)}\n"))
    with pytest.raises(ValueError, match="python/object/apply:os.system") as info:
        evaluate_checkpoint(path, 2, 0)
    assert f"run {sac.name}: checkpoints/best.pt" in str(info.value)
    one_sentence(str(info.value))
    assert not marker.exists()


def planted_module(tmp_path: Path, marker: Path) -> Path:
    """A folder holding a module that creates ``marker`` when imported (what a run folder could ship)."""
    folder = tmp_path / "planted"
    folder.mkdir(exist_ok=True)
    (folder / "gsolve_planted_env.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    return folder


def test_an_env_id_naming_a_module_is_refused(stopped_dqn: Path, sb3_runs: dict[str, Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Gymnasium imports the module of 'module:EnvId'; with the cwd on sys.path (``python -m``, as our
    spawned trainers and promote_run start) that could be a file planted in the runs folder."""
    marker = tmp_path / "PWNED"
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))
    sac = copy_run(sb3_runs["sac"], tmp_path)
    path = checkpoint_path(sac, rf.BEST_CHECKPOINT)
    edit_checkpoint(path, lambda p: p.update(
        config_yaml=p["config_yaml"].replace("env_id: Pendulum-v1", "env_id: gsolve_planted_env:Pendulum-v1")))
    with pytest.raises(ValueError, match="names a Python module for Gymnasium to import") as info:
        evaluate_checkpoint(path, 2, 0)
    one_sentence(str(info.value))
    dqn = copy_run(stopped_dqn, tmp_path)
    text = (dqn / rf.CONFIG_YAML).read_text()
    (dqn / rf.CONFIG_YAML).write_text(text.replace("env_id: CartPole-v1", "env_id: gsolve_planted_env:CartPole-v1"))
    with pytest.raises(ValueError, match="names a Python module"):
        plan_resume(dqn)
    assert not marker.exists()


# -- a run folder naming a module for --env-package / --env-class -------------------------------------

ENV_MODULE_PLANTS = {"env_package": ("env_package: [gsolve_planted_env]", "--env-package gsolve_planted_env"),
                     "env_class": ("env_class: gsolve_planted_env:Evil", "--env-class gsolve_planted_env:Evil")}


def plant_env_module(run_dir: Path, line: str) -> None:
    """Name the planted module in the run's config.yaml and in every checkpoint's embedded config."""
    (run_dir / rf.CONFIG_YAML).write_text((run_dir / rf.CONFIG_YAML).read_text() + line + "\n")
    for path in (run_dir / rf.CHECKPOINTS_DIR).glob("*.pt"):
        edit_checkpoint(path, lambda p: p.update(config_yaml=p["config_yaml"] + line + "\n"))


@pytest.mark.parametrize("key", list(ENV_MODULE_PLANTS))
def test_a_run_folder_naming_a_module_never_imports_it(stopped_dqn: Path, tmp_path: Path, key: str,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """config.yaml (and the checkpoints' embedded config) name a module on sys.path that would run code
    when imported: eval, resume, promote, fix, retry and diagnose never import it; every command that needs
    the environment refuses in one sentence naming the flag a user who trusts it would pass."""
    marker = tmp_path / "PWNED"
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))
    monkeypatch.delitem(sys.modules, "gsolve_planted_env", raising=False)  # an earlier test's import would hide ours
    line, flag = ENV_MODULE_PLANTS[key]
    run_dir = copy_run(stopped_dqn, tmp_path)
    plant_env_module(run_dir, line)
    runs = str(run_dir.parent)
    with pytest.raises(ValueError, match=f"pass {flag}") as info:
        evaluate_checkpoint(checkpoint_path(run_dir, "last"), 2, 0)
    one_sentence(str(info.value))
    with pytest.raises(ValueError, match=f"pass {flag}"):
        start_resume(run_dir)  # the MCP's and `gsolve train --resume`'s detached start: refused before spawning
    for argv in (["eval", run_dir.name, "--checkpoint", "last"], ["train", "--resume", run_dir.name],
                 ["promote", run_dir.name, "--episodes", "2"], ["fix", run_dir.name, "--seeds", "1"],
                 ["retry", run_dir.name, "--set", "gamma=0.98"]):
        assert cli.main([*argv, "--runs-dir", runs]) == 2, argv
        err = capsys.readouterr().err
        assert f"pass {flag}" in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert cli.main(["diagnose", run_dir.name, "--runs-dir", runs]) == 0  # a pure read: nothing to import
    proc = subprocess.run([str(GSOLVE), "eval", run_dir.name, "--checkpoint", "last", "--runs-dir", runs],
                          capture_output=True, text=True, timeout=120, check=False, cwd=planted_module(tmp_path, marker))
    assert proc.returncode == 2 and f"pass {flag}" in proc.stderr, proc.stderr
    assert not marker.exists() and "gsolve_planted_env" not in sys.modules
    # The planted module does run code when imported (so this test can fail).
    __import__("gsolve_planted_env")
    assert marker.exists()


@pytest.mark.anyio
async def test_mcp_never_imports_a_module_a_run_or_a_preset_names(stopped_dqn: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Over MCP: promote_run and resume of a run naming a module, and start_training of a preset naming one
    (a preset a CLI user's own `gsolve train` would trust), are refused unless `gsolve mcp --env-package`."""
    marker = tmp_path / "PWNED"
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))
    monkeypatch.delitem(sys.modules, "gsolve_planted_env", raising=False)
    run_dir = copy_run(stopped_dqn, tmp_path)
    plant_env_module(run_dir, ENV_MODULE_PLANTS["env_package"][0])
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "CartPole-v1.yaml").write_text("base:\n  env_package: [gsolve_planted_env]\nvariants:\n  ppo:\n    algo: ppo\n")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    async with Client(create_server(run_dir.parent)) as client:
        promoted = await client.call_tool("promote_run", {"run_id": run_dir.name, "episodes": 2})
        resumed = await client.call_tool("start_training", {"resume": run_dir.name})
        started = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo"})
    for res in (promoted, resumed, started):
        assert res.is_error and "--env-package gsolve_planted_env" in str(res.content), res
    assert not marker.exists() and "gsolve_planted_env" not in sys.modules


def test_a_saved_preset_never_carries_a_runs_module(stopped_dqn: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`gsolve presets save` of someone else's run would otherwise turn its env_package into a preset that
    the user's own `gsolve train` trusts."""
    run_dir = copy_run(stopped_dqn, tmp_path)
    plant_env_module(run_dir, ENV_MODULE_PLANTS["env_package"][0])
    presets = tmp_path / "presets"
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    assert cli.main(["presets", "save", run_dir.name, "mine", "--runs-dir", str(run_dir.parent)]) == 0
    assert "gsolve_planted_env" not in (presets / "CartPole-v1.yaml").read_text()


# -- imports -----------------------------------------------------------------------------------------

def test_an_object_array_in_evaluations_npz_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    src = tmp_path / "sb3_log"
    shutil.copytree(FIXTURES / "sb3_log_dqn_cartpole", src)
    results = np.array([[Payload(marker)]], dtype=object)
    np.savez(src / "evaluations.npz", timesteps=np.array([1000]), results=results, ep_lengths=np.array([[10]]))
    with pytest.raises(ImportError_, match="evaluations.npz") as info:
        import_runs([src], tmp_path / "runs")
    one_sentence(str(info.value))
    assert not marker.exists()


@pytest.mark.parametrize("plant", ["python_tag", "env_module"])
def test_rl_zoo_yaml_cannot_run_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str) -> None:
    marker = tmp_path / "PWNED"
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))
    src = tmp_path / "zoo"
    shutil.copytree(FIXTURES / "rlzoo_dqn_cartpole", src)
    params = src / "CartPole-v1"
    if plant == "python_tag":  # nested inside the OrderedDict the Zoo's loader accepts
        text = (params / "config.yml").read_text()
        (params / "config.yml").write_text(text.replace("dict(net_arch=[256, 256])", python_tag(marker)))
    else:
        text = (params / "args.yml").read_text()
        assert "CartPole-v1" in text
        (params / "args.yml").write_text(text.replace("CartPole-v1", "gsolve_planted_env:CartPole-v1"))
    with pytest.raises(ImportError_) as info:
        import_runs([src], tmp_path / "runs")
    one_sentence(str(info.value))
    assert not marker.exists()


def test_cleanrl_hyperparameters_are_data_not_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CleanRL's hyperparameters text is parsed as YAML scalars: a python tag stays a string, and an
    env_id naming a module is refused."""
    from torch.utils.tensorboard import SummaryWriter

    marker = tmp_path / "PWNED"
    monkeypatch.syspath_prepend(str(planted_module(tmp_path, marker)))

    def event_folder(name: str, env_id: str) -> Path:
        folder = tmp_path / name
        writer = SummaryWriter(str(folder))
        rows = {"exp_name": "dqn", "env_id": env_id, "seed": 1, "gamma": python_tag(marker)}
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in rows.items()))
        for step in range(1, 4):
            writer.add_scalar("charts/episodic_return", 10.0 * step, step * 100)
        writer.close()
        return folder

    imported = import_runs([event_folder("tagged", "CartPole-v1")], tmp_path / "runs")
    assert [r.outcome for r in imported.runs] == ["imported"]
    with pytest.raises(ImportError_, match="names a Python module") as info:
        import_runs([event_folder("module", "gsolve_planted_env:CartPole-v1")], tmp_path / "runs")
    one_sentence(str(info.value))
    assert not marker.exists()


def test_a_payload_in_a_bare_sb3_model_zip_never_runs_on_import(sb3_runs: dict[str, Path], tmp_path: Path) -> None:
    """`gsolve import model.zip` reads the hyperparameters of SB3's data JSON: a cloudpickle payload under
    ':serialized:' (where SB3's load() would unpickle it: the liveness test above) is never decoded, nor
    is policy.pth; the plain values around it are still imported."""
    marker = tmp_path / "PWNED"
    saved = torch.load(checkpoint_path(sb3_runs["sac"], rf.BEST_CHECKPOINT), weights_only=True)["sb3_model"]
    planted = planted_zip(planted_zip(saved, "data", marker), "policy.pth", marker).numpy().tobytes()
    with zipfile.ZipFile(io.BytesIO(planted)) as z:
        data = json.loads(z.read("data"))
    assert pickle.loads(base64.b64decode(data["policy_class"][":serialized:"])) == 0 and marker.exists()  # live
    marker.unlink()
    data["gamma"] = {":type:": "<class 'float'>", ":serialized:": data["policy_class"][":serialized:"]}
    model = tmp_path / "Pendulum-v1.zip"
    model.write_bytes(rewrite_zip(planted, "data", json.dumps(data).encode()))
    result = import_runs([model], tmp_path / "runs")
    assert [r.kind for r in result.runs] == ["sb3_model_zip"] and result.runs[0].algo == "sac"
    config = (tmp_path / "runs" / result.runs[0].run_id / rf.CONFIG_YAML).read_text()
    assert "gamma:" not in config.split("sb3_data:")[0] and "batch_size: 32" in config  # the plain values only
    assert cli.main(["import", str(model), "--runs-dir", str(tmp_path / "runs2")]) == 0
    assert not marker.exists()
