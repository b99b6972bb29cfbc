"""Beyond Box observations and registered ids (issue 22 item 1): Discrete, Tuple and Dict observations train
through one observation wrapper (the same in training, evaluation and reload, ours and SB3's); a package that
registers ids (--env-package) and a user's own class (--env-class) train, evaluate, diagnose and fix.
The custom environments are tests/envs/my_env.py (imported as tests.envs.my_env from the repo root)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from shared_util import stop_after

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, env_modules, resolve_config, resolve_with_origin
from gymnasium_solver.config.spaces import OBSERVATION_KINDS, env_spaces
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import SpaceSpec, batch_obs, make_vec_env, space_spec
from gymnasium_solver.train import training
from gymnasium_solver.train.checkpoints import checkpoint_config, checkpoint_path, load_checkpoint
from gymnasium_solver.train.policy_eval import evaluate_checkpoint

REPO = Path(__file__).resolve().parent.parent
GSOLVE = Path(sys.executable).with_name("gsolve")
CORRIDOR = "tests.envs.my_env:Corridor"
SHORT = ["max_env_steps=2048", "n_envs=4", "eval_freq=1024", "eval_episodes=2"]


def _train(capsys: pytest.CaptureFixture[str], runs: Path, *argv: str) -> tuple[int, Path, str]:
    code = cli.main(["train", *argv, "--runs-dir", str(runs), "--quiet", "--no-fail"])
    out = capsys.readouterr()
    return code, Path(out.out.strip().splitlines()[-1]), out.err


def _gsolve(*argv: str) -> subprocess.CompletedProcess[str]:
    """A real `gsolve` process from the repo root (where a user's module is found), nothing granted but its flags."""
    env = {**os.environ, "GSOLVE_CONFIG": ""}
    return subprocess.run([str(GSOLVE), *argv], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)


def _first_obs(path: Path, n: int, seed: int) -> tuple[SpaceSpec, np.ndarray]:
    """The spaces and first observations (batched for the network) of n envs made from a checkpoint's config."""
    env = make_vec_env(checkpoint_config(path), n)
    try:
        spec = space_spec(env)
        return spec, batch_obs(env.reset(seed=seed)[0], spec, n)
    finally:
        env.close()


def test_every_observation_kind_is_declared_once_and_says_how() -> None:
    assert set(OBSERVATION_KINDS) == {"box", "discrete", "multi_discrete", "multi_binary", "dict", "tuple"}
    taxi, blackjack = env_spaces("Taxi-v4"), env_spaces("Blackjack-v1")
    assert taxi.observation_refusal is None and "one-hot encoded into 500 numbers" in str(taxi.observation_note)
    assert blackjack.observation_kind == "tuple" and "into 45 numbers" in str(blackjack.observation_note)
    r = resolve_with_origin("CliffWalking-v1:dqn", use_zoo=False)
    assert any("one-hot encoded into 48 numbers" in n for n in r.origin.notes)


def test_discrete_observations_default_to_dqn_learning_a_table(tmp_path: Path) -> None:
    """`gsolve train Taxi-v4` (a state index as observation): DQN with a linear Q-network over the one-hot states,
    one weight per state and action, which the checkpoint keeps and reloads to the same greedy actions."""
    r = resolve_with_origin("Taxi-v4", use_zoo=False)
    assert r.config.config_id == "Taxi-v4:dqn" and r.config.hidden_sizes == [], r.origin.notes
    assert "training with dqn, which learns a table over the states" in r.origin.notes[0]
    assert r.origin.sources["hidden_sizes"] == "default" and "Discrete observations" in r.origin.where
    assert (r.config.learning_rate, r.config.train_freq, r.config.target_update_interval) == (0.01, 1, 500)  # type: ignore[union-attr]
    # The spaces that choose are those of the env the run makes: its env_kwargs too (8x8: 64 states, not 16).
    big = resolve_with_origin("FrozenLake-v1", ["env_kwargs={map_name: 8x8}"], use_zoo=False)
    assert "Discrete(64) observations" in big.origin.notes[0] and "into 64 numbers" in big.origin.notes[1], big.origin
    # The table is DQN's default on these observations only: PPO keeps its MLP, Box observations keep PPO.
    assert resolve_config("Taxi-v4:ppo", use_zoo=False).hidden_sizes == [64, 64]
    assert resolve_config("MountainCar-v0", use_zoo=False).config_id == "MountainCar-v0:ppo"
    assert resolve_config("MountainCar-v0:dqn", use_zoo=False).hidden_sizes == [64, 64]
    cfg = resolve_config("Taxi-v4", ["max_env_steps=600", "learning_starts=100", "eval_freq=300", "eval_episodes=2"],
                         use_zoo=False)
    run_dir = training.train(cfg, tmp_path).run_dir
    path = checkpoint_path(run_dir, rf.BEST_CHECKPOINT)
    weights = {k: v.shape for k, v in torch.load(path, weights_only=True)["model"].items()}
    assert weights == {"q_net.0.weight": (6, 500), "q_net.0.bias": (6,)}, weights  # one linear layer: the table
    # run.json says the observations were Discrete (one-hot), and the diagnosis does not call the table a network
    # too small (it did, for a new user's CliffWalking-v1 run with gsolve's own defaults).
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore

    assert rf.read_run_info(run_dir).observation_kind == "discrete"
    d = diagnose_run_dir(RunStore(tmp_path), run_dir)
    assert "network_too_small" not in [f.id for f in d.findings], [f.id for f in d.findings]
    spec, obs = _first_obs(path, 3, seed=5)
    first, second = load_checkpoint(path, spec), load_checkpoint(path, spec)
    np.testing.assert_array_equal(first.policy.act(obs, None, deterministic=True).env_actions,
                                  second.policy.act(obs, None, deterministic=True).env_actions)


def test_taxi_trains_and_its_checkpoint_reloads_to_identical_actions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    code, run_dir, err = _train(capsys, tmp_path, "Taxi-v4:ppo", "--set", *SHORT)
    assert code == 0 and "Discrete(500) observations: one-hot encoded into 500 numbers" in err, err
    info = rf.read_run_info(run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.config_id == "Taxi-v4:ppo"
    path = checkpoint_path(run_dir, rf.BEST_CHECKPOINT)
    spec, obs = _first_obs(path, 3, seed=7)
    assert spec.obs_dim == 500 and np.array_equal(obs.sum(axis=1), np.ones(3))  # one-hot, as in training
    first, second = load_checkpoint(path, spec), load_checkpoint(path, spec)
    acts = first.policy.act(obs, None, deterministic=True).env_actions
    np.testing.assert_array_equal(acts, second.policy.act(obs, None, deterministic=True).env_actions)
    # A fresh process (`gsolve eval`) reloads it to the same episodes as this one.
    here = evaluate_checkpoint(path, 2, 0).result
    out = _gsolve("eval", run_dir.name, "--runs-dir", str(tmp_path), "--episodes", "2", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["returns"] == [float(r) for r in here.returns]


def test_sb3_flattens_the_same_way_and_reloads_to_sb3s_own_actions(tmp_path: Path) -> None:
    from gymnasium_solver.agents.sb3 import sb3_class

    cfg = resolve_config("Taxi-v4:qrdqn", ["max_env_steps=400", "iteration_steps=200", "eval_freq=200",
                                           "learning_starts=50", "eval_episodes=2", "hidden_sizes=[16]",
                                           "batch_size=32", "reward_threshold=1000"], use_zoo=False)
    run_dir = training.train(cfg, tmp_path).run_dir
    path = checkpoint_path(run_dir, rf.BEST_CHECKPOINT)
    spec, obs = _first_obs(path, 4, seed=3)
    saved = torch.load(path, weights_only=True)["sb3_model"]
    reference = sb3_class(cfg.algo).load(io.BytesIO(saved.numpy().tobytes()), device="cpu")  # trusted: ours
    assert reference.observation_space.shape == (500,)  # SB3 trained on the same one-hot vector
    expected, _ = reference.predict(obs, deterministic=True)
    np.testing.assert_array_equal(load_checkpoint(path, spec).policy.act(obs, None, deterministic=True).env_actions,
                                  expected)


def test_a_dict_observation_env_from_a_package_trains_and_reloads_only_with_its_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("minigrid")
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    code, run_dir, err = _train(capsys, tmp_path, "MiniGrid-Empty-5x5-v0:ppo", "--env-package", "minigrid",
                                "--set", *SHORT)
    assert code == 0 and "into 151 numbers (text entries dropped: 'mission')" in err, err
    assert "0x" not in err  # MiniGrid's mission function is named without its address
    text = (run_dir / rf.CONFIG_YAML).read_text()
    assert "env_package:\n- minigrid" in text and "env_class: null" in text
    refused = _gsolve("eval", run_dir.name, "--runs-dir", str(tmp_path), "--episodes", "2")
    assert refused.returncode == 2 and "pass --env-package minigrid" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert cli.main(["eval", run_dir.name, "--runs-dir", str(tmp_path), "--episodes", "2", "--env-package", "minigrid"]) == 0
    assert "over 2 episodes" in capsys.readouterr().out


def test_a_users_class_trains_evaluates_diagnoses_and_fixes_end_to_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing run (a learning rate far too small) of a class from a user's module: `gsolve fix` (a real
    process) runs its candidates in child trainers, each given the same --env-class by the fix process."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    nothing_granted = env_modules.snapshot()
    code, run_dir, err = _train(capsys, tmp_path, "Corridor-v0:ppo", "--env-class", CORRIDOR, "--seed", "1", "--set",
                                "max_env_steps=4096", "eval_freq=2048", "reward_threshold=0.8", "learning_rate=0.000001")
    assert code == 0 and "Discrete(6) observations: one-hot encoded" in err, err
    assert not rf.read_run_info(run_dir).solved  # the planted fault
    assert "env_class: tests.envs.my_env:Corridor" in (run_dir / rf.CONFIG_YAML).read_text()
    assert cli.main(["diagnose", run_dir.name, "--runs-dir", str(tmp_path), "--json"]) == 0  # reads only: no flag
    assert json.loads(capsys.readouterr().out)["findings"]
    env_modules.restore(nothing_granted)  # a new command, without the flag
    assert cli.main(["diagnose", run_dir.name, "--runs-dir", str(tmp_path)]) == 0
    tries = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("try")]
    assert tries and all(line.endswith(f"--env-class {CORRIDOR}") for line in tries), tries  # copyable as printed
    assert cli.main(["fix", run_dir.name, "--runs-dir", str(tmp_path), "--seeds", "1"]) == 2
    assert f"pass --env-class {CORRIDOR}" in capsys.readouterr().err
    fix = _gsolve("fix", run_dir.name, "--runs-dir", str(tmp_path), "--seeds", "1", "--max-trials", "2",
                  "--env-class", CORRIDOR, "--json")
    assert fix.returncode in (0, 3), fix.stderr
    record = json.loads(fix.stdout)
    trials = [t for t in record["trials"] if t.get("run_id")]
    assert trials and all(t["outcome"] != "failed" for t in trials), record
    for t in trials:  # each trial trained the user's class in its own process
        assert rf.read_run_info(tmp_path / t["run_id"]).env_id == "Corridor-v0"
        assert "env_class: tests.envs.my_env:Corridor" in (tmp_path / t["run_id"] / rf.CONFIG_YAML).read_text()
    assert record["verdict"] == "fixed", record


def test_every_command_diagnose_prints_for_a_users_class_carries_its_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`gsolve diagnose` of a run of a user's class printed its try commands with --env-class, but 'Apply ...:
    gsolve retry RUN' and 'Next: ... `gsolve fix RUN`' without it: copied as printed, both were refused."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    nothing_granted = env_modules.snapshot()
    code, run_dir, _ = _train(capsys, tmp_path, "Corridor-v0:ppo", "--env-class", CORRIDOR, "--set", *SHORT,
                              "reward_threshold=0.8", "learning_rate=0.000001")
    env_modules.restore(nothing_granted)
    assert code == 0 and not rf.read_run_info(run_dir).solved
    assert cli.main(["diagnose", run_dir.name, "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"gsolve retry {run_dir.name} --env-class {CORRIDOR}\n" in out
    assert f"`gsolve fix {run_dir.name} --env-class {CORRIDOR}`" in out


def test_a_run_without_a_reward_threshold_is_not_sent_to_a_fix_that_cannot_judge_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's class has no threshold: `gsolve diagnose` said 'Verify before trusting it: gsolve fix RUN', and
    `gsolve fix` trained every candidate to answer not_fixed, since nothing can solve without a threshold."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    nothing_granted = env_modules.snapshot()
    code, run_dir, _ = _train(capsys, tmp_path, "Corridor-v0:ppo", "--env-class", CORRIDOR, "--set", *SHORT)
    assert code == 0 and rf.read_run_info(run_dir).reward_threshold is None
    assert cli.main(["diagnose", run_dir.name, "--runs-dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["next_step"] == (
        "With no reward threshold nothing can be verified as solved: train it again with one (--set "
        "reward_threshold=R, the return you call solved), then `gsolve fix` that run (MCP fix_run).")
    assert cli.main(["fix", run_dir.name, "--runs-dir", str(tmp_path), "--seeds", "1", "--env-class", CORRIDOR]) == 2
    assert "has no reward threshold, so no trial could solve" in capsys.readouterr().err
    env_modules.restore(nothing_granted)
    assert [p.name for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")] == [run_dir.name]


def test_a_sweep_and_its_check_train_a_users_class_with_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`gsolve sweep Corridor-v0:ppo --env-class ...` (and sweep-check) answered "unknown environment 'Corridor-v0'
    ... your own gymnasium.Env trains with --env-class": the flag was imported but never bound to the id."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    nothing_granted = env_modules.snapshot()
    space = tmp_path / "space.yaml"
    space.write_text("learning_rate: {type: log_uniform, low: 0.0001, high: 0.01}\n")
    runs = tmp_path / "runs"
    code = cli.main(["sweep", "Corridor-v0:ppo", "--env-class", CORRIDOR, "--runs-dir", str(runs), "--trials", "1",
                     "--space", str(space), "--json",
                     *(f for kv in [*SHORT, "reward_threshold=0.5"] for f in ("--set", kv))])
    env_modules.restore(nothing_granted)
    out, err = capsys.readouterr()
    assert code in (0, 3), err
    summary = json.loads(out)
    assert summary["finished"] == 1 and summary["best"]["command"].endswith(f"--env-class {CORRIDOR}"), summary
    trial = runs / summary["best"]["run_id"]
    assert f"env_class: {CORRIDOR}" in (trial / rf.CONFIG_YAML).read_text()
    if code == 0:  # a solved trial to check
        assert cli.main(["sweep-check", summary["sweep"]["sweep_id"], "--env-class", CORRIDOR, "--runs-dir",
                         str(runs), "--top", "1", "--seeds", "5"]) in (0, 3), capsys.readouterr().err
        env_modules.restore(nothing_granted)


def test_observations_no_algorithm_takes_are_refused_in_one_line(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    code = cli.main(["train", "Chatty-v0:ppo", "--env-class", "tests.envs.my_env:Chatty", "--runs-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "Text(" in err and "(text), which no gsolve algorithm takes" in err and "discrete, multi_discrete" in err
    assert not any(tmp_path.iterdir())  # refused before a run folder exists


@pytest.mark.parametrize("argv, words", [
    (["--set", "env_package=[minigrid]"], ["--set cannot change 'env_package'", "pass --env-package"]),
    (["--set", "env_class=os:system"], ["--set cannot change 'env_class'"]),
    (["--env-package", "not a module"], ["takes a Python package name"]),
    (["--env-package", "gsolve_no_such_pkg"], ["cannot import it"]),
    (["--env-class", "tests.envs.my_env"], ["takes MODULE:CLASS"]),
    (["--env-class", "tests.envs.my_env:NotThere"], ["has no gymnasium.Env subclass named NotThere"]),
    (["--env-class", CORRIDOR, "--env-class", "tests.envs.my_env:Chatty"], ["give one --env-class"]),
])
def test_bad_env_module_flags_are_one_sentence(argv: list[str], words: list[str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    config_id = "CartPole-v1:ppo" if argv[0] == "--set" else "Corridor-v0:ppo"
    assert cli.main(["train", config_id, *argv, "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and all(w in err for w in words), err


def test_a_misspelt_class_names_the_classes_its_module_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--env-class tests.envs.my_env:Corridr said only 'has no gymnasium.Env subclass named Corridr'."""
    assert cli.main(["train", "Corridor-v0:ppo", "--env-class", "tests.envs.my_env:Corridr", "--runs-dir",
                     str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "has no gymnasium.Env subclass named Corridr; did you mean tests.envs.my_env:Corridor? (its gymnasium.Env "
        "classes: Chatty, CoinFlip, Corridor)")


def test_list_envs_with_a_class_says_how_it_gets_an_id(capsys: pytest.CaptureFixture[str]) -> None:
    """`gsolve list-envs --env-class M:Corridor` imported the class and listed nothing about it, silently."""
    nothing_granted = env_modules.snapshot()
    try:
        assert cli.main(["list-envs", "--env-class", CORRIDOR]) == 0
    finally:
        env_modules.restore(nothing_granted)
    assert capsys.readouterr().err.strip() == (
        f"gsolve list-envs: note: --env-class {CORRIDOR} has no id until a command names one: `gsolve train "
        f"Corridor-v0:ppo --env-class {CORRIDOR}` trains it as Corridor-v0 (as `gsolve mcp --env-class {CORRIDOR}` "
        "serves it)")


def test_a_class_cannot_take_over_a_registered_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pass --env-class"):
        env_modules.bind_class("Other-v0", CORRIDOR)  # not granted in this process (yet)
    assert cli.main(["train", "CartPole-v1:ppo", "--env-class", CORRIDOR, "--runs-dir", str(tmp_path)]) == 2
    assert "'CartPole-v1' is already registered" in capsys.readouterr().err


def test_a_users_own_preset_may_name_the_package_and_the_cli_trusts_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("minigrid")
    (tmp_path / "MiniGrid-Empty-5x5-v0.yaml").write_text(
        "base:\n  env_package: [minigrid]\nvariants:\n  ppo:\n    algo: ppo\n    max_env_steps: 4096\n")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path))
    trusting = env_modules.snapshot()
    env_modules.distrust_presets()  # what the MCP server does: only its own flags grant
    with pytest.raises(ConfigError, match="a preset names .* pass --env-package minigrid"):
        resolve_with_origin("MiniGrid-Empty-5x5-v0:ppo")
    env_modules.restore(trusting)  # a CLI process: the user's own preset folder is theirs
    r = resolve_with_origin("MiniGrid-Empty-5x5-v0:ppo")
    assert r.config.env_package == ["minigrid"] and r.origin.sources["env_package"] == "preset"


def test_evaluation_episodes_that_never_end_are_counted_as_unfinished_and_the_run_says_how_to_end_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CliffWalking-v1 has no time limit and an untrained greedy policy walks in a loop: each evaluation stops at
    its bound (100,000 steps, here 50), counts what the episodes had earned, and the run warns once, in run.json
    and run.log, that the figure is no episode's return and which setting gives episodes an end."""
    from gymnasium_solver.train import evaluation

    monkeypatch.setattr(evaluation, "MAX_EVAL_STEPS", 50)
    cfg = resolve_config("CliffWalking-v1:dqn", ["max_env_steps=300", "eval_freq=100", "eval_episodes=2",
                                                 "iteration_steps=100"])
    info = rf.read_run_info(training.train(cfg, tmp_path).run_dir)
    assert info.last_eval is not None and info.last_eval.return_mean <= -50  # -1 a step for 50 steps, or the cliff
    [warning] = info.warnings
    assert warning.kind == "eval_episodes_unfinished" and warning.source == "env_kwargs.max_episode_steps"
    assert warning.env_steps == 100  # the first evaluation's
    assert warning.message.startswith("2 of 2 evaluation episodes had not ended after 50 steps")
    assert "CliffWalking-v1's Gymnasium spec sets no time limit" in warning.message
    assert "--set env_kwargs.max_episode_steps=N" in warning.message
    log = (tmp_path / info.run_id / rf.RUN_LOG).read_text(encoding="utf-8")
    assert log.count("warning: 2 of 2 evaluation episodes") == 1
    # The diagnosis leads with it: no figure judged on those evaluations holds.
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore

    top = diagnose_run_dir(RunStore(tmp_path), tmp_path / info.run_id).findings[0]
    assert top.id == "eval_episodes_unfinished" and top.severity == "critical"
    assert "env_kwargs.max_episode_steps=N" in top.cause and top.evidence[0].observed == warning.message

    # With a time limit (Gymnasium's TimeLimit through env_kwargs) every episode ends: no warning.
    limited = resolve_config("CliffWalking-v1:dqn", ["max_env_steps=300", "eval_freq=100", "eval_episodes=2",
                                                     "iteration_steps=100", "env_kwargs.max_episode_steps=20"])
    info = rf.read_run_info(training.train(limited, tmp_path).run_dir)
    assert info.warnings == [] and info.last_eval is not None and info.last_eval.return_mean >= -20 * 100
    # An environment with a time limit above the bound (a user's env_kwargs, or a spec's) is named as such.
    from gymnasium_solver.train.session import unfinished_message

    said = unfinished_message(resolve_config("CartPole-v1:ppo", ["env_kwargs.max_episode_steps=200000",
                                                                 "reward_threshold=475"]),
                              evaluation.EvalResult(0.0, 0.0, 50.0, 10, [], unfinished=3))
    assert said.startswith("3 of 10 evaluation episodes") and "its time limit of 200,000 steps is above" in said


def test_an_evaluation_that_steps_far_more_than_the_training_between_two_is_said_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An untrained greedy policy that never ends an episode early (Breakout's never presses FIRE) plays every
    evaluation episode to the time limit: here CliffWalking-v1 truncated at 500 steps, 10 episodes (5,000 env steps)
    per 100 env steps trained. The run warns once that evaluating takes most of its time and what to change; counted
    in env steps, so the same on every machine (the bound is 50,000 env steps, here 1,000)."""
    from gymnasium_solver.train import evaluation, session

    real = evaluation.COSTLY_EVAL_MIN
    monkeypatch.setattr(evaluation, "COSTLY_EVAL_MIN", 1_000)
    cfg = resolve_config("CliffWalking-v1:dqn", ["max_env_steps=300", "eval_freq=100", "eval_episodes=10",
                                                 "iteration_steps=100", "env_kwargs.max_episode_steps=500"])
    info = rf.read_run_info(training.train(cfg, tmp_path).run_dir)
    [warning] = info.warnings
    assert (warning.kind, warning.source, warning.env_steps) == ("evaluation_costly", "eval_episodes", 100)
    assert warning.message.startswith("this evaluation played 10 episodes of 500 steps on average (5,000 env "
                                      "steps), 50 times the 100 env steps trained since the previous evaluation")
    assert "lower eval_episodes, raise eval_freq" in warning.message
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore

    notes = diagnose_run_dir(RunStore(tmp_path), tmp_path / info.run_id).notes  # gsolve diagnose says it too
    assert f"The run warned at 100 env steps: {warning.message}" in notes
    # Not said for an ordinary evaluation, below the bound, or beside the unfinished-episodes warning (which says
    # more: those returns are no episode's).
    said = session.costly_evaluation_message
    monkeypatch.setattr(evaluation, "COSTLY_EVAL_MIN", real)
    assert said(evaluation.EvalResult(0.0, 0.0, 500.0, 10, []), 100) is None  # 5,000 env steps, under 50,000
    monkeypatch.setattr(evaluation, "COSTLY_EVAL_MIN", 1_000)
    assert said(evaluation.EvalResult(0.0, 0.0, 99.0, 10, []), 10) is None  # 990 env steps
    assert said(evaluation.EvalResult(0.0, 0.0, 500.0, 10, [], unfinished=2), 100) is None
    assert said(evaluation.EvalResult(0.0, 0.0, 500.0, 10, []), 1_000) is None  # 5x the training since: not 10x
    assert said(evaluation.EvalResult(0.0, 0.0, 500.0, 10, []), 0) is None  # a final one right after the last


def test_an_old_version_of_a_registered_id_is_refused_with_the_version_that_replaced_it() -> None:
    """Gymnasium 1.x dropped Taxi-v3 for Taxi-v4: say that, not 'unknown environment' with guesses."""
    from gymnasium_solver.config.spaces import check_registered

    with pytest.raises(ConfigError, match=r"'Taxi-v3' is not registered: .*Please use `Taxi-v4` instead"):
        check_registered("Taxi-v3")
    with pytest.raises(ConfigError, match=r"unknown environment 'CartPole-v9'; did you mean 'CartPole-v1'"):
        check_registered("CartPole-v9")


def test_a_space_is_described_in_one_short_line() -> None:
    """Notes and refusals quote the observation space: a Box's own bounds on one line (str() wraps LunarLander's over
    three), many bounds as their range (BipedalWalker's 24 pairs), and nested spaces the same way."""
    import gymnasium as gym

    from gymnasium_solver.config.spaces import describe_space

    lunar = describe_space(gym.make("LunarLander-v3").observation_space)
    assert lunar == "Box([-2.5 -2.5 -10 -10 -6.283 -10 0 0], [2.5 2.5 10 10 6.283 10 1 1], (8,), float32)"
    wide = gym.spaces.Box(low=-np.arange(1, 25, dtype=np.float32), high=np.arange(1, 25, dtype=np.float32))
    assert describe_space(wide) == "Box(bounds within -24..24, each dimension its own, (24,), float32)"
    nested = gym.spaces.Dict({"pos": wide, "image": gym.spaces.Box(0, 255, (7, 7, 3), np.uint8)})
    assert describe_space(nested) == ("Dict('image': Box(0, 255, (7, 7, 3), uint8), 'pos': Box(bounds within -24..24, "
                                      "each dimension its own, (24,), float32))")
    assert describe_space(gym.spaces.Tuple((gym.spaces.Discrete(3), wide))).startswith("Tuple(Discrete(3), Box(bounds")
    assert "\n" not in lunar and "\n" not in describe_space(wide)


def test_an_ale_game_without_a_preset_is_found_and_told_how_it_trains() -> None:
    """Gymnasium 1.x registers the ALE's games only once ale_py is imported: with the atari extra installed, an ALE id
    we ship no preset for (ALE/Pong-v5, BreakoutNoFrameskip-v4) is found, not "unknown environment ... did you mean
    'Ant-v5'? (set atari_wrappers: true)", which that setting did not cure; without the RL Zoo's atari entry
    (tests/test_zoo_atari.py), its raw frames are refused with the command that trains it, and that command resolves."""
    pytest.importorskip("ale_py")
    from gymnasium_solver.config import ConfigError, resolve_config
    from gymnasium_solver.config.spaces import check_registered

    check_registered("ALE/Pong-v5")
    with pytest.raises(ConfigError, match=r"did you mean 'ALE/Pong-v5'.*\(ALE games are registered by the atari extra, "
                                          r"which is installed\)"):
        check_registered("ALE/Pongg-v5")
    with pytest.raises(ConfigError, match=r"gsolve train BreakoutNoFrameskip-v4:ppo --set atari_wrappers=true "
                                          r"network=nature_cnn normalize_observations=false reward_clip=1.0$"):
        resolve_config("BreakoutNoFrameskip-v4", use_zoo=False)
    cfg = resolve_config("BreakoutNoFrameskip-v4:ppo", ["atari_wrappers=true", "network=nature_cnn",
                                                        "normalize_observations=false", "reward_clip=1.0"], use_zoo=False)
    assert cfg.atari_wrappers and cfg.network == "nature_cnn" and cfg.reward_clip == 1.0


COIN = ["max_env_steps=2048", "n_envs=4", "eval_freq=128", "eval_episodes=3"]


def test_a_check_that_cannot_tell_its_mean_from_the_threshold_runs_more_episodes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every coin-flip policy averages 0.5. Against a threshold of 0.9 the first 51 episodes settle it (0.59, far
    below); against 0.55 they cannot tell (their mean lies within noise of it), so the check runs another 51, and
    more, up to 4 x 51, before it decides: not solved, on the larger sample."""
    from gymnasium_solver.train.evaluation import CONFIRM_ALPHA, CONFIRM_ROUNDS, settled

    assert settled([500.0] * 50, 475) and settled([1.0, 0.0] * 25, 0.9) and not settled([1.0, 0.0] * 25, 0.55)
    from scipy import stats  # settled's p-value is ttest_1samp's: the same decision on samples near the cut

    rng = np.random.default_rng(11)
    for _ in range(200):
        sample = list(rng.normal(0.0, 1.0, int(rng.integers(2, 300))))
        for threshold in (-0.3, -0.1, 0.0, 0.12, 0.25):
            p = stats.ttest_1samp(sample, threshold).pvalue
            if abs(p - CONFIRM_ALPHA) > 1e-9:
                assert settled(sample, threshold) == (p < CONFIRM_ALPHA), (len(sample), threshold, p)
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    _, run_dir, _ = _train(capsys, tmp_path, "CoinFlip-v0:ppo", "--env-class", "tests.envs.my_env:CoinFlip",
                           "--seed", "0", "--set", *COIN, "reward_threshold=0.55", "confirm_episodes=50")
    checks = [(int(m[1]), float(m[2])) for m in re.finditer(r"; (\d+) more episodes: (\S+) \+-",
                                                               (run_dir / rf.RUN_LOG).read_text())]
    assert checks and all(51 < n <= CONFIRM_ROUNDS * 51 and abs(mean - 0.5) < 0.1 for n, mean in checks), checks
    assert not rf.read_run_info(run_dir).solved


CHECK = re.compile(r"eval at \d+ env steps reached [^;]*; \d+ more episodes: \S+ \+- \S+")


def test_a_resumed_run_checks_its_lucky_evaluations_on_the_seeds_an_uninterrupted_one_would(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The confirmation seeds follow a count of the episodes checked so far, which the resumable checkpoint keeps: a
    coin-flip run stopped after its first failed check and resumed makes the checks an uninterrupted run makes (the
    same means over the same episodes), and warns once, as that run does."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    argv = ["CoinFlip-v0:ppo", "--env-class", "tests.envs.my_env:CoinFlip", "--seed", "0", "--set", *COIN,
            "eval_episodes=2", "n_steps=32", "reward_threshold=0.9", "confirm_episodes=50", "last_checkpoint_seconds=0"]
    _, whole, _ = _train(capsys, tmp_path / "whole", *argv)
    checks = CHECK.findall((whole / rf.RUN_LOG).read_text())
    assert len(checks) >= 2 and checks[0].startswith("eval at 128 "), checks  # one before the stop, more after
    monkeypatch.setattr(training, "stop_on_signals", lambda: stop_after(6))  # 6 x 128 env steps: after the first
    _, stopped, _ = _train(capsys, tmp_path / "resumed", *argv)
    assert rf.read_run_info(stopped).status == rf.RunStatus.STOPPED
    monkeypatch.undo()
    assert cli.main(["train", "--resume", stopped.name, "--runs-dir", str(tmp_path / "resumed"), "--quiet",
                     "--no-fail"]) == 0
    assert CHECK.findall((stopped / rf.RUN_LOG).read_text()) == checks
    assert [w.kind for w in rf.read_run_info(stopped).warnings] == ["solve_not_confirmed"]


@pytest.mark.parametrize(("threshold", "confirm", "solved"), [(0.9, 0, True), (0.9, 50, False), (0.4, 50, True)])
def test_a_solve_on_a_lucky_evaluation_is_checked_on_more_episodes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, threshold: float,
        confirm: int, solved: bool) -> None:
    """A coin flip pays 1 on heads whatever the agent does (every policy averages 0.5), yet seed 0's 3-episode evaluation
    at 512 env steps returned 1.0: solved, by SB3's and the Zoo's definition (confirm_episodes=0). A new user's
    FrozenLake-v1 DQN 'solved' the same way (1.0 over 10 episodes; 0.62 over 200 of that checkpoint, threshold 0.7).
    With confirm_episodes, 50 more episodes must average the threshold too: at 0.9 they do not (not solved, said in
    run.log), at 0.4 they do (solved at the same evaluation, its check recorded beside it)."""
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    code, run_dir, err = _train(capsys, tmp_path, "CoinFlip-v0:ppo", "--env-class", "tests.envs.my_env:CoinFlip",
                                "--seed", "0", "--set", *COIN, f"reward_threshold={threshold}",
                                f"confirm_episodes={confirm}")
    info = rf.read_run_info(run_dir)
    assert code == 0 and info.solved is solved
    log = (run_dir / rf.RUN_LOG).read_text()
    if not confirm:
        assert info.solved_at is not None and (info.solved_at.env_steps, info.solved_at.eval_return_mean) == (512, 1.0)
        assert info.solved_at.confirm_return_mean is None and "more episodes" not in log
    elif solved:
        s = info.solved_at
        assert s is not None and s.env_steps == 512 and s.confirm_episodes == 51 and 0.4 <= s.confirm_return_mean < 0.7  # type: ignore[operator]
        assert "51 more episodes" in log and "(confirmed)" in log
    else:
        assert info.solved_at is None and info.best_eval is not None and info.best_eval.return_mean == 1.0
        said = "eval at 512 env steps reached 1 >= 0.9; 51 more episodes: 0.5882 +- 0.4922"
        assert [(w.kind, w.env_steps) for w in info.warnings] == [("solve_not_confirmed", 512)]
        assert f"{said}: not solved, the evaluation was luck" in log and f"warning: {said}" in err
        from types import SimpleNamespace

        from gymnasium_solver.cli.train import summary_line

        ended = SimpleNamespace(solved_at=None, best_eval=info.best_eval, stop_reason=info.stop_reason, failure=None,
                                env_steps=2048, wall_seconds=1.0, run_dir=run_dir)  # gsolve train's last line
        assert "best eval 1.000 (threshold 0.9; that evaluation was luck: more episodes fell short" in summary_line(
            "CoinFlip-v0:ppo", 0.9, ended)
        from gymnasium_solver.diagnostics import diagnose_run_dir
        from gymnasium_solver.run_store import RunStore

        d = diagnose_run_dir(RunStore(tmp_path), run_dir)  # not "Solved: best eval 1 >= 0.9; no problems found"
        assert not d.returns.solved and d.summary.startswith(f"Not solved (completed): {said};"), d.summary
        assert "solve_not_confirmed" in [f.id for f in d.findings]
