"""`gsolve train CONFIG --seeds ...`: one config on several seeds through the trial pool, judged over them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from gymnasium_solver.cli.app import main
from gymnasium_solver.cli.error import ExitCode
from gymnasium_solver.cli.json_out import json_schema
from gymnasium_solver.contract import run_folder as rf

# Tiny runs: 4 envs x 32 steps a rollout, an evaluation of 2 episodes every 256 env steps.
TINY = ["n_envs=4", "n_steps=32", "batch_size=64", "eval_freq=256", "eval_episodes=2"]


def test_seeds_train_ordinary_runs_and_judge_the_config_over_them(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["train", "CartPole-v1:ppo", "--seeds", "3", "5-6", "--parallel", "2", "--set", *TINY,
                 "max_env_steps=2048", "reward_threshold=15", "--runs-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == ExitCode.OK, out + err
    runs = {rf.read_run_info(d).seed: rf.read_run_info(d) for d in tmp_path.iterdir() if d.is_dir()}
    assert sorted(runs) == [3, 5, 6]
    for seed, info in runs.items():  # plain runs of the config, not trials: `gsolve runs` lists them
        assert info.config_id == "CartPole-v1:ppo" and info.experiment_id is None and info.sweep_id is None
        assert info.solved_at is not None
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [str(seed)])
        assert row[1:4] == [info.run_id, "solved", f"{info.solved_at.env_steps:,}"], row
    steps = sorted(info.solved_at.env_steps for info in runs.values() if info.solved_at is not None)
    assert f"CartPole-v1:ppo over 3 seeds: solved 3/3; env steps to solve: median {steps[1]:,}" in out
    assert f"fastest {steps[0]:,}" in out and f"slowest {steps[-1]:,}" in out
    assert "on 3 seeds, 2 at a time" in err and err.count("] seed ") == 3
    assert main(["runs", "--runs-dir", str(tmp_path)]) == 0
    listed = capsys.readouterr().out
    assert all(info.run_id in listed for info in runs.values())


def test_an_unsolved_seed_counts_with_its_budget_and_exits_unsolved(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    args = ["train", "CartPole-v1:ppo", "--seeds", "0-2", "--set", *TINY, "max_env_steps=512", "reward_threshold=400",
            "--runs-dir", str(tmp_path), "--quiet", "--json"]
    assert main(args) == ExitCode.UNSOLVED
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json_schema("train"))
    assert [r["seed"] for r in doc["runs"]] == [0, 1, 2] and not any(r["solved"] for r in doc["runs"])
    assert all(r["outcome"] == "not solved" and r["env_steps"] >= 512 for r in doc["runs"])
    assert doc["env_steps"]["seeds"] == 3 and doc["env_steps"]["solved"] == 0 and doc["env_steps"]["median"] >= 512
    assert main([*args[:-1], "--no-fail"]) == ExitCode.OK  # a script that only asks whether they trained
    out = capsys.readouterr().out
    assert "an unsolved seed counts with the env steps it trained" in out
    # No seed solved: the fastest is a lower bound too, never a figure that reads as a solve.
    assert re.search(r"fastest >= [\d,]+ \(seed \d, not solved\), slowest >= [\d,]+ \(seed \d, not solved\)", out), out


@pytest.mark.parametrize(("extra", "message"), [
    (["--seeds", "0-2", "--seed", "1"], "give --seed without --seeds"),
    (["--seeds", "2-1"], "--seeds takes integers or ranges like 1-5, got '2-1'"),
    (["--seeds", "0", "1", "0"], "seed 0 is given twice"),
    (["--seeds", "0-500"], "at most 200"),
    (["--seeds", "0-2", "--set", "seed=4"], "give no --set seed=... with it"),
    (["--parallel", "2"], "--parallel is for --seeds"),
    (["--seeds", "0-1", "--parallel", "0"], "parallel must be at least 1"),
])
def test_bad_seeds_are_one_line_before_anything_trains(extra: list[str], message: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "CartPole-v1:ppo", *extra, "--runs-dir", str(tmp_path)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_seeds_of_a_preset_are_judged_against_its_seed_sample(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # learning_rate is a change to the preset; the solve definition (475) is the sample's, so the runs are compared
    assert main(["train", "CartPole-v1:ppo", "--seeds", "0-1", "--set", "learning_rate=0.003", "--runs-dir",
                 str(tmp_path), "--quiet", "--json", "--no-fail"]) == ExitCode.OK
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json_schema("train"))
    assert doc["vs_preset"].startswith("2 runs of CartPole-v1:ppo ") and "Mann-Whitney U = " in doc["vs_preset"]
    assert re.search(r"over \d+ seeds, slowest solved [\d,]+ \(\d+ seeds of the CartPole-v1:ppo preset", doc["vs_preset"])
    # `gsolve compare` of those runs says the same under "over seeds" (the group's vs_preset)
    ids = [r["run_id"] for r in doc["runs"]]
    assert main(["compare", *ids, "--runs-dir", str(tmp_path), "--json"]) == ExitCode.OK
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert len(groups) == 1 and groups[0]["vs_preset"] == doc["vs_preset"]
    assert main(["compare", *ids, "--runs-dir", str(tmp_path)]) == ExitCode.OK
    assert f"against the preset's seeds, CartPole-v1:ppo: {doc['vs_preset']}" in capsys.readouterr().out
    # another solve definition (the first test's threshold 15): no comparison with the sample's 475
    assert main(["train", "CartPole-v1:ppo", "--seeds", "0-1", "--set", *TINY, "max_env_steps=512",
                 "reward_threshold=15", "--runs-dir", str(tmp_path / "low"), "--quiet", "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["vs_preset"] is None
