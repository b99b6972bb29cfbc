"""start_training(seeds=...) over MCP: one ordinary run per seed, started together under the live-run cap, judged
together by compare_runs (solved k of n and the spread over seeds, as `gsolve train --seeds` reports it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import kill_run_if_alive
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver.contract import run_folder as rf
from mcp_server.server import create_server

pytestmark = pytest.mark.anyio

FAST = {"max_env_steps": 12_288, "n_envs": 4, "batch_size": 128}  # CartPole-v1:ppo in a few seconds, solved or not


def _text(res: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in res.content)


def _kill(runs_dir: Path) -> None:
    for d in runs_dir.iterdir() if runs_dir.is_dir() else []:
        kill_run_if_alive(d)


async def _ended(runs_dir: Path, run_ids: list[str], seconds: float = 240) -> None:
    for _ in range(int(seconds * 4)):
        if all(rf.read_run_info(runs_dir / r).status != rf.RunStatus.RUNNING for r in run_ids):
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"runs still running after {seconds} s: {run_ids}")


async def test_seeds_start_one_run_each_and_compare_runs_judges_them(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    limits = launcher.StartLimits(max_live_runs=2, max_env_steps=1_000_000, max_n_envs=8)
    try:
        async with Client(create_server(runs_dir, limits)) as client:
            res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo", "overrides": FAST,
                                                            "seeds": [5, 6]})
            assert not res.is_error, _text(res)
            out = res.structured_content
            assert out is not None
            ids = out["run_ids"]
            assert len(ids) == 2 and out["run_id"] == ids[0] and "compare_runs(run_ids=" in out["started"]["note"]

            # Both slots are taken: a third seed is refused before it makes a folder.
            res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo", "overrides": FAST,
                                                            "seeds": [7]})
            assert res.is_error and "at most 2" in _text(res)
            await _ended(runs_dir, ids)
            res = await client.call_tool("start_training", {"config_id": "CartPole-v1:ppo", "overrides": FAST,
                                                            "seeds": [7]})
            assert res.structured_content is not None and len(res.structured_content["run_ids"]) == 1
            assert "one seed is one draw" in res.structured_content["started"]["note"]
            ids7 = res.structured_content["run_ids"]
            await _ended(runs_dir, ids7)
            assert [yaml.safe_load((runs_dir / r / "config.yaml").read_text())["seed"] for r in ids] == [5, 6]

            res = await client.call_tool("compare_runs", {"run_ids": ids})
            assert not res.is_error, _text(res)
            assert res.structured_content is not None
            [group] = res.structured_content["comparison"]["groups"]
            infos = [rf.read_run_info(runs_dir / r) for r in ids]
            trained = [i.solved_at.env_steps if i.solved_at else i.progress.env_steps for i in infos]
            assert group["seeds"] == [5, 6] and group["running"] == 0
            assert group["env_steps"]["seeds"] == 2 and group["env_steps"]["solved"] == group["solved"]
            assert group["env_steps"]["low"] == min(trained) and group["env_steps"]["high"] == max(trained)
            assert sorted(os.listdir(runs_dir)) == sorted(ids + ids7)
    finally:
        _kill(runs_dir)


@pytest.mark.parametrize(("args", "says"), [
    ({"seeds": [1, 2, 3]}, "at most 2"),
    ({"seeds": [1, 1]}, "seed 1 is given twice"),
    ({"seeds": [-1]}, "seeds must be >= 0"),
    ({"seeds": []}, "at least one seed"),
    ({"seeds": [1], "overrides": {"seed": 3}}, "not a seed in overrides"),
    ({"seeds": [1], "resume": "@last", "config_id": None}, "keeps its config and seed"),
])
async def test_bad_seeds_are_refused_in_a_sentence_and_start_nothing(tmp_path: Path, args: dict[str, Any],
                                                                     says: str) -> None:
    runs_dir = tmp_path / "runs"
    limits = launcher.StartLimits(max_live_runs=2, max_env_steps=1_000_000, max_n_envs=8)
    call = {"config_id": "CartPole-v1:ppo", **args}
    call = {k: v for k, v in call.items() if v is not None}
    try:
        async with Client(create_server(runs_dir, limits)) as client:
            res = await client.call_tool("start_training", call)
        assert res.is_error and says in _text(res), _text(res)
        assert "Traceback" not in _text(res)
        assert not runs_dir.exists() or not any(runs_dir.iterdir())
    finally:
        _kill(runs_dir)
