"""An environment with no preset, through the MCP server (issue 22 items 4 and 5): `gsolve mcp --env-class
MODULE:CLASS` makes a user's own class trainable as CLASS-v0, and an assistant lists it, starts it (with the same
validation and live-run cap as any id), reads its run, diagnoses it and proves a fix by running candidates, all
through a real MCP client. The class is tests/envs/my_env.py's Corridor (imported from the repo root)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver.config import ConfigError, env_modules
from gymnasium_solver.contract import run_folder as rf

CORRIDOR = "tests.envs.my_env:Corridor"
# A failing run: a learning rate far too small, in a budget of 4 updates (the diagnosis blames the budget; the
# fix it proves by running is whatever solves).
FAULT = {"max_env_steps": 4096, "eval_freq": 2048, "reward_threshold": 0.8, "learning_rate": 0.000001, "seed": 1}


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return res.is_error, (text if res.is_error else res.structured_content)


def _server(runs: Path, **caps: int) -> Any:
    from mcp_server.server import create_server

    limits = launcher.StartLimits(**{"max_live_runs": 2, "max_env_steps": 50_000, "max_n_envs": 64, **caps})
    return create_server(runs, limits)


@pytest.mark.anyio
async def test_an_assistant_lists_trains_diagnoses_and_fixes_a_users_class(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    env_modules.grant_from_flags([], [CORRIDOR])  # what `gsolve mcp --env-class tests.envs.my_env:Corridor` does
    async with Client(_server(tmp_path, max_live_runs=1)) as client:
        failed, envs = await _call(client, "list_environments", {})
        assert not failed and envs["own"] == [{"env_id": "Corridor-v0", "settings": "default", "preset_variants": {},
                                                "zoo_algos": [], "zoo_entry": None, "registered_by": f"--env-class {CORRIDOR}"}], envs
        failed, found = await _call(client, "list_environments", {"filter": "corridor"})  # MiniGrid has corridors too
        assert not failed and envs["own"][0] in found["registered"], found
        failed, cfg = await _call(client, "get_config", {"config_id": "Corridor-v0"})
        assert not failed and cfg["config_id"] == "Corridor-v0:dqn" and cfg["config"]["env_class"] == CORRIDOR
        assert cfg["config"]["hidden_sizes"] == []  # Discrete observations: DQN learning a table
        assert cfg["value_sources"]["learning_rate"] == "default"
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v0:sac"})
        assert failed and "sac cannot take" in text  # validated as any id
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v0:ppo",
                                                              "overrides": {"env_class": "os:system"}})
        assert failed and "env_class" in text  # a client never names a module
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v0:ppo"})
        assert failed and "max_env_steps" in text  # the server's budget cap (defaults: 1M env steps)

        failed, started = await _call(client, "start_training", {"config_id": "Corridor-v0:ppo", "overrides": FAULT})
        assert not failed and started["started"]["config_id"] == "Corridor-v0:ppo", started
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v0:ppo", "overrides": FAULT})
        assert failed and "live" in text  # the live-run cap
        run_id = started["run_id"]
        failed, waited = await _call(client, "get_run_info", {"run_id": run_id, "view": "status", "wait_seconds": 60})
        assert not failed and waited["status"]["finished"], waited

        # Reading it: the run, its curves, its diagnosis (no preset and no solved run to compare with).
        failed, info = await _call(client, "get_run_info", {"run_id": run_id})
        assert not failed and info["status"]["status"] == "completed" and not info["status"]["solved"], info
        failed, metrics = await _call(client, "get_run_metrics", {"run_id": run_id,
                                                                  "metrics": ["eval/return_mean"]})
        assert not failed and metrics["curves"]["series"][0]["metric"] == "eval/return_mean", metrics
        assert metrics["curves"]["series"][0]["env_steps"] == [2048, 4096], metrics
        failed, diagnosis = await _call(client, "diagnose_run", {"run_id": run_id})
        assert not failed and diagnosis["findings"], diagnosis
        top = diagnosis["findings"][0]  # from the run's own metrics: no preset to revert to, no solved run
        assert top["severity"] != "info" and top["suggested_changes"], diagnosis

        failed, text = await _call(client, "get_run_info", {"run_id": run_id, "view": "frames", "frame_count": 1})
        assert failed and "Corridor-v0 cannot be recorded: its environment takes no render_mode" in text, text
        assert "Traceback" not in text and "TypeError" not in text, text

        # Proving a fix: candidates train in child processes, each given the server's --env-class.
        failed, fix = await _call(client, "fix_run", {"run_id": run_id, "max_trials": 2, "seeds": 1})
        assert not failed, fix
        record = await _wait_fix(client, fix["experiment_id"])
    assert record["status"] == "done" and record["verdict"] == "fixed", record
    trials = [t for t in record["trials"] if t.get("run_id")]
    assert trials and all(t["outcome"] != "failed" for t in trials), record
    for t in trials:
        assert rf.read_run_info(tmp_path / t["run_id"]).env_id == "Corridor-v0"
        assert f"env_class: {CORRIDOR}" in (tmp_path / t["run_id"] / rf.CONFIG_YAML).read_text()


async def _wait_fix(client: Client, experiment_id: str) -> dict[str, Any]:
    for _ in range(600):  # a bound on the polls, not on the time: the trials are a few thousand env steps each
        failed, record = await _call(client, "get_fix", {"experiment_id": experiment_id})
        assert not failed, record
        if record["status"] != "running":
            return dict(record)
        time.sleep(1)
    raise AssertionError(f"fix {experiment_id} still running: {record}")


@pytest.mark.anyio
async def test_one_environment_without_a_preset_lists_each_algorithm_that_takes_it(tmp_path: Path) -> None:
    """list_environments(env_id=...) answered "no preset ... did you mean 'LunarLander-v3'?" for every registered
    id we ship no preset for (the issue's first complaint); it now says how each algorithm would train it."""
    async with Client(_server(tmp_path)) as client:
        failed, one = await _call(client, "list_environments", {"env_id": "MountainCarContinuous-v0"})
        assert not failed and one["environments"] == [] and one["registered"][0]["env_id"] == "MountainCarContinuous-v0"
        by_algo = {v["algo"]: v for v in one["variants"]}
        assert list(by_algo) == ["ppo", "a2c", "reinforce", "sac", "td3", "tqc"], by_algo  # Box actions
        assert by_algo["reinforce"]["settings"]["max_env_steps"] and by_algo["reinforce"]["problem"] is None
        if one["registered"][0]["zoo_algos"]:  # rl_zoo3 installed: its TD3 entry uses Ornstein-Uhlenbeck noise
            assert "ornstein-uhlenbeck" in by_algo["td3"]["problem"], by_algo["td3"]
        assert "a bare MountainCarContinuous-v0 trains ppo" in one["note"]
        failed, text = await _call(client, "list_environments", {"env_id": "MountainCar-v9"})
        assert failed and "unknown environment 'MountainCar-v9'; did you mean 'MountainCar-v0'" in text, text


@pytest.mark.anyio
async def test_a_refused_zoo_entry_trains_with_the_defaults_over_mcp_too(tmp_path: Path) -> None:
    """`gsolve train --no-zoo` had no MCP counterpart: an environment whose Zoo entry we cannot reproduce (Pendulum's
    A2C entry uses gSDE) could not be started by an assistant at all."""
    from gymnasium_solver.config.zoo import zoo_entry

    if zoo_entry("Pendulum-v1", "a2c") is None:
        pytest.skip("rl_zoo3 is not installed")
    async with Client(_server(tmp_path)) as client:
        failed, text = await _call(client, "start_training", {"config_id": "Pendulum-v1:a2c"})
        assert failed and "use_sde=True" in text and "MCP: zoo=false" in text, text
        failed, cfg = await _call(client, "get_config", {"config_id": "Pendulum-v1:a2c", "zoo": False})
        assert not failed and cfg["settings_from"].startswith("default"), cfg
        failed, started = await _call(client, "start_training", {
            "config_id": "Pendulum-v1:a2c", "zoo": False,
            "overrides": {"max_env_steps": 400, "n_envs": 2, "eval_freq": 400, "eval_episodes": 1}})
        assert not failed and started["started"]["settings_from"].startswith("default"), started
        failed, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                              "wait_seconds": 60})
        assert not failed and waited["status"]["status"] == "completed", waited
    assert rf.read_run_info(tmp_path / started["run_id"]).config_origin.settings == "default"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_server_not_given_the_class_says_which_flag_would(tmp_path: Path) -> None:
    """A run of a user's class, read by a server started without --env-class: reading and diagnosing need nothing,
    a fix (whose trials make the environment) is refused at once, in one sentence naming the flag."""
    run_dir = tmp_path / "20261127-120000-corridor"
    run_dir.mkdir()
    cfg = {"env_id": "Corridor-v0", "algo": "ppo", "variant": "ppo", "env_class": CORRIDOR, "max_env_steps": 4096}
    (run_dir / rf.CONFIG_YAML).write_text(json.dumps(cfg))  # JSON is YAML; fix_run refuses before it reads more
    async with Client(_server(tmp_path)) as client:
        failed, text = await _call(client, "fix_run", {"run_id": run_dir.name})
        assert failed and f"pass --env-class {CORRIDOR}" in text, text
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v1:ppo"})
        assert failed and "your own gymnasium.Env trains with --env-class MODULE:CLASS" in text, text
    env_modules.grant_from_flags([], [CORRIDOR])
    async with Client(_server(tmp_path)) as client:
        failed, text = await _call(client, "start_training", {"config_id": "Corridor-v1:ppo"})
        assert failed and "this process's own classes are Corridor-v0" in text, text


def test_a_class_whose_served_id_is_taken_is_refused_in_one_sentence() -> None:
    import gymnasium as gym

    env_modules.grant_from_flags([], ["tests.envs.my_env:Chatty"])
    gym.register(id="Chatty-v0", entry_point=CORRIDOR)  # someone else's environment under the id Chatty would get
    try:
        with pytest.raises(ConfigError, match=r"^--env-class tests.envs.my_env:Chatty: gsolve mcp registers it as "
                                              r"'Chatty-v0', which is already registered as .*Corridor; give"):
            env_modules.bind_granted_classes()
    finally:
        del gym.registry["Chatty-v0"]
    assert env_modules.bind_granted_classes() == {"Chatty-v0": "tests.envs.my_env:Chatty"}
    assert env_modules.bind_granted_classes() == {"Chatty-v0": "tests.envs.my_env:Chatty"}  # idempotent
    assert env_modules.granted_ids() == {"Chatty-v0": "--env-class tests.envs.my_env:Chatty"}
