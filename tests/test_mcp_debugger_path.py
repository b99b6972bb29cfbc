"""The rl-run-debugger prompt's path, replayed through the real MCP client on planted faults.

The prompt (.claude/agents/rl-run-debugger.md) tells the model to answer "why did my run fail?"
with a verified fix in at most 5 tool calls: diagnose_run -> try_fixes -> get_experiment (polled
until done; the polling counts as one step) -> answer. Here that path runs on corpus fault runs
copied into a temporary runs folder, with real trial runs, and must land on the planted cause:

- the top finding's first suggested change moves the planted key back the right way,
- a preset deviation of that key is attributed to the top finding (the evidence the answer quotes),
- the experiment finishes, and its winner solved and changed that key.

The parents come from the corpus, so only the trials train (CartPole, seconds each); two trials
per experiment keep it to the 2 shared cores.
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
from corpus_util import CORPUS, copy_case
from mcp import Client

from mcp_server.server import create_server

pytestmark = pytest.mark.slow

# One classic fault (learning rate 400x too low) and one of the new mechanisms (horizon too short).
CASES = ["lr_low_s0", "short_horizon_s0"]
MAX_STEPS = 5  # what the prompt promises: tool calls per run, polling counted once
MAX_TRIALS = 2
POLL_SECONDS = 0.5
MAX_WAIT_SECONDS = 180.0  # a bound, so a broken coordinator fails the test instead of hanging it


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
        if not (self.steps and self.steps[-1] == name == "get_experiment"):
            self.steps.append(name)
        res = await self.client.call_tool(name, args)
        text = " ".join(getattr(c, "text", "") for c in res.content)
        assert not res.is_error, f"{name} failed: {text}"
        assert isinstance(res.structured_content, dict)
        return res.structured_content

    async def wait_for_experiment(self, experiment_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            record = await self.call("get_experiment", {"experiment_id": experiment_id})
            if record["status"] != "running" or time.monotonic() > deadline:
                return record
            await anyio.sleep(POLL_SECONDS)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES)
async def test_debugger_path_ends_in_a_verified_fix_of_the_planted_key(case: str, tmp_path: Path) -> None:
    labels = json.loads((CORPUS / case / "labels.json").read_text(encoding="utf-8"))
    key, direction = labels["expected_key"], labels["expected_direction"]
    runs = tmp_path / "runs"
    run_id = copy_case(case, runs)

    async with Client(create_server(runs)) as client:
        s = Session(client)
        # 1. diagnose_run: verdict, top finding, its evidence, the preset deviations.
        diagnosis = await s.call("diagnose_run", {"run_id": run_id})
        assert not diagnosis["returns"]["solved"] and diagnosis["verdict"] != "healthy"
        top = diagnosis["findings"][0]
        assert top["evidence"], "the answer quotes the top finding's evidence"
        first = top["suggested_changes"][0]
        assert first["key"] == key and first["direction"] == direction, top
        assert moves(direction, first["current"], first["suggested"]), first
        deviation = next(d for d in diagnosis["references"]["deviations"] if d["key"] == key)
        assert top["id"] in deviation["explains"], deviation

        # 2. try_fixes: returns at once with the experiment id.
        started = await s.call("try_fixes", {"run_id": run_id, "max_trials": MAX_TRIALS})
        assert key in started["candidates"][0]["changes"]

        # 3. get_experiment until done (one step however many polls).
        try:
            record = await s.wait_for_experiment(started["experiment_id"])
        finally:
            if (runs / ".experiments" / f"{started['experiment_id']}.json").exists():
                latest = json.loads((runs / ".experiments" / f"{started['experiment_id']}.json").read_text())
                if latest["status"] == "running":  # timed out: end the coordinator this test started
                    os.kill(started["pid"], signal.SIGTERM)

    assert len(s.steps) <= MAX_STEPS, s.steps
    assert s.steps == ["diagnose_run", "try_fixes", "get_experiment"]
    assert record["status"] == "done", record["message"]
    winner = record["winner"]
    assert winner is not None, record["message"]
    trial = next(t for t in record["trials"] if t["run_id"] == winner["run_id"])
    assert trial["outcome"] == "solved" and winner["solved_at_env_steps"] > 0
    assert key in winner["changes"] and moves(direction, first["current"], winner["changes"][key]), winner
    # 4. the answer: the exact command that reproduces the winning trial.
    assert winner["command"].startswith(f"gsolve train {diagnosis['config_id']}") and "--set" in winner["command"]
