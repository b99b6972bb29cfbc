"""The rl-run-debugger prompt's path, replayed through the real MCP client on planted faults.

The prompt (.claude/agents/rl-run-debugger.md) tells the model to answer "why did my run fail?"
with a verified fix in at most 5 tool calls: diagnose_run -> fix_run -> get_fix (polled
until done; the polling counts as one step) -> answer, with no seeds run by hand: the experiment's
verdict is taken over seeds. Here that path runs with real trial runs and must land on the planted
cause:

- the top finding's first suggested change moves the planted key back the right way,
- a deviation of that key (from the preset, or from our shipped preset for a user's own preset) is
  attributed to the top finding (the evidence the answer quotes),
- the experiment finishes with verdict 'fixed': its winner changed that key, solved on every seed
  and keeps none of the keys the top finding blames.

Two kinds of run: corpus fault runs of our presets (copied, so only the trials train), and a run of
a user's own CartPole-v1 PPO preset ($GSOLVE_CONFIG_DIR) whose preset itself holds the fault,
trained here. Two trials per experiment keep it to the 2 shared cores.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from corpus_util import CORPUS, copy_case
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.cli.error import ExitCode
from gymnasium_solver.config.presets import CONFIG_DIR_ENV, PACKAGE_CONFIG_DIR
from gymnasium_solver.contract import run_folder as rf
from mcp_server.server import create_server

pytestmark = pytest.mark.slow

# One classic fault (learning rate 400x too low) and one of the new mechanisms (horizon too short).
CASES = ["lr_low_s0", "short_horizon_s0"]
MAX_STEPS = 5  # what the prompt promises: tool calls per run, polling counted once
MAX_TRIALS = 2
SEEDS = 3  # the prompt's (and fix_run's) default
POLL_SECONDS = 0.5
MAX_WAIT_SECONDS = 240.0  # a bound, so a broken coordinator fails the test instead of hanging it

# The user's preset: our CartPole-v1:ppo with a constant learning rate of 1e-5 (760x below our start
# value) and a 40k budget. Measured: it fails seeds 0-2 (best eval 237, 259, 244 of 475); our learning
# rate in its place solves them at 10,240, 4,096 and 6,144 env steps. The budget is above the slowest
# of our shipped reference runs (32,768), so the diagnosis does not blame it too: at 30k the top
# finding also raised max_env_steps, and our schedule, which decays to 0 over the budget, missed seed 2.
# Judged on 2 seeds, the prompt's option for a slow environment: every trial of the unchanged config
# spends the whole 40k budget (~20 s on the 2 shared cores). 3 seeds pass too (0 of 3 vs 3 of 3): 85 s
# instead of 30-50 s (2026-11-27, load ~4).
USER_LR, USER_BUDGET, USER_SEEDS = 1e-5, 40_000, 2


def start(value: Any) -> float:
    """The number a change is about: a schedule's start value, or the value itself."""
    return float(value["start"] if isinstance(value, dict) else value)


def moves(direction: str, before: Any, after: Any) -> bool:
    if isinstance(before, list) or isinstance(after, list):  # hidden_sizes: compare the narrowest layer
        before, after = min(before or [0]), min(after or [0])
    return start(after) > start(before) if direction == "increase" else start(after) < start(before)


class Session:
    """The MCP client as the model uses it: every call is a step, except repeated polls."""

    def __init__(self, client: Client):
        self.client = client
        self.steps: list[str] = []

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if not (self.steps and self.steps[-1] == name == "get_fix"):
            self.steps.append(name)
        res = await self.client.call_tool(name, args)
        text = " ".join(getattr(c, "text", "") for c in res.content)
        assert not res.is_error, f"{name} failed: {text}"
        assert isinstance(res.structured_content, dict)
        return res.structured_content

    async def wait_for_experiment(self, experiment_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            record = await self.call("get_fix", {"experiment_id": experiment_id})
            if record["status"] != "running" or time.monotonic() > deadline:
                return record
            await anyio.sleep(POLL_SECONDS)


Result = dict[str, Any]


async def replay(runs: Path, run_id: str, key: str, direction: str, seeds: int) -> tuple[Result, Result]:
    """The prompt's path on one run; returns (diagnosis, experiment record) after checking what the
    answer quotes: the top finding, the deviation it explains, a fix verified on every seed."""
    async with Client(create_server(runs)) as client:
        s = Session(client)
        # 1. diagnose_run: verdict, top finding, its evidence, the deviations.
        diagnosis = await s.call("diagnose_run", {"run_id": run_id})
        assert not diagnosis["returns"]["solved"] and diagnosis["verdict"] != "healthy"
        top = diagnosis["findings"][0]
        assert top["evidence"], "the answer quotes the top finding's evidence"
        first = top["suggested_changes"][0]
        assert first["key"] == key and first["direction"] == direction, top
        assert moves(direction, first["current"], first["suggested"]), first
        deviation = next(d for d in diagnosis["references"]["deviations"] if d["key"] == key)
        assert top["id"] in deviation["explains"], deviation

        # 2. fix_run: returns at once with the experiment id.
        started = await s.call("fix_run", {"run_id": run_id, "max_trials": MAX_TRIALS, "seeds": seeds})
        assert key in started["candidates"][0]["changes"]

        # 3. get_fix until done (one step however many polls).
        try:
            record = await s.wait_for_experiment(started["experiment_id"])
        finally:
            path = runs / ".experiments" / f"{started['experiment_id']}.json"
            if path.exists() and json.loads(path.read_text())["status"] == "running":
                os.kill(started["pid"], signal.SIGTERM)  # timed out: end the coordinator this test started

    assert len(s.steps) <= MAX_STEPS, s.steps
    assert s.steps == ["diagnose_run", "fix_run", "get_fix"]
    print(f"{run_id}: {len(s.steps)} tool calls {s.steps}; {record['message']}")
    # 4. the answer: the verdict over seeds, with no seed run by hand.
    assert record["status"] == "done", record["message"]
    assert record["verdict"] == "fixed", record["message"]
    assert len(record["seeds"]) == seeds and record["arms"][0]["name"] == "your config (unchanged)"
    winner = record["winner"]
    assert winner is not None, record["message"]
    assert winner["seeds_solved"] == winner["seeds"] == seeds, winner
    assert key in winner["changes"] and moves(direction, first["current"], winner["changes"][key]), winner
    # The winner keeps nothing the top finding blames, except what it was verified not to need: the
    # horizon finding reverts gamma and gae_lambda, and gamma alone solves every seed (gae_lambda is
    # then in both lists).
    assert key not in winner["keeps_blamed"] and set(winner["keeps_blamed"]) <= set(winner["dropped"]), winner
    trial = next(t for t in record["trials"] if t["run_id"] == winner["run_id"])
    assert trial["outcome"] == "solved" and winner["solved_at_env_steps"] > 0
    # The exact command that reproduces the winning trial.
    assert winner["command"].startswith(f"gsolve train {diagnosis['config_id']}"), winner
    assert "--set" in winner["command"], winner
    return diagnosis, record


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES)
async def test_debugger_path_ends_in_a_verified_fix_of_the_planted_key(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_DIR_ENV, raising=False)
    labels = json.loads((CORPUS / case / "labels.json").read_text(encoding="utf-8"))
    runs = tmp_path / "runs"
    run_id = copy_case(case, runs)
    await replay(runs, run_id, labels["expected_key"], labels["expected_direction"], SEEDS)


@pytest.fixture
def user_preset_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A failed run of the user's own CartPole-v1 PPO preset (the fault is in the preset, not in --set),
    trained here on seed 0 with $GSOLVE_CONFIG_DIR pointing at the user's preset folder."""
    ours = yaml.safe_load((PACKAGE_CONFIG_DIR / "CartPole-v1.yaml").read_text(encoding="utf-8"))
    variant = {**ours["base"], **ours["variants"]["ppo"], "learning_rate": USER_LR,
               "max_env_steps": USER_BUDGET}
    presets = tmp_path / "my_presets"
    presets.mkdir()
    (presets / "CartPole-v1.yaml").write_text(yaml.safe_dump({"variants": {"ppo": variant}}),
                                              encoding="utf-8")
    monkeypatch.setenv(CONFIG_DIR_ENV, str(presets))  # the trials (child processes) inherit it
    runs = tmp_path / "runs"
    assert cli.main(["train", "CartPole-v1:ppo", "--runs-dir", str(runs), "--quiet"]) == ExitCode.UNSOLVED
    (run_dir,) = [p for p in runs.iterdir() if not p.name.startswith(".")]
    info = rf.read_run_info(run_dir)
    assert (info.seed, info.solved, info.overrides) == (0, False, {}), info  # the preset's own fault
    return runs, run_dir.name


@pytest.mark.anyio
async def test_debugger_path_fixes_a_users_own_preset(user_preset_run: tuple[Path, str]) -> None:
    runs, run_id = user_preset_run
    diagnosis, record = await replay(runs, run_id, "learning_rate", "increase", USER_SEEDS)
    # The answer can say where the fix comes from: the user's preset against our shipped one.
    refs = diagnosis["references"]
    assert refs["compared_with"][0].startswith("your preset"), refs["compared_with"]
    lr = next(d for d in refs["deviations"] if d["key"] == "learning_rate")
    assert lr["source"] == "shipped_preset" and lr["reference"] == "our shipped preset CartPole-v1:ppo", lr
    winner = record["winner"]
    assert winner["changes"]["learning_rate"] == lr["preset"] and winner["keeps_blamed"] == [], winner
    assert record["arms"][0]["solved"] == 0  # the user's config fails its fresh seeds too: a fault, not luck
