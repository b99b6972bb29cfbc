"""compare_to_baseline, list_models and promote_run through a real in-process MCP client."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from conftest import RealRuns
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver import model_registry as reg
from gymnasium_solver import run_folder as rf
from mcp_server.server import create_server

pytestmark = pytest.mark.anyio


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


async def test_ops_tools_are_registered_with_the_right_annotations(real_runs: RealRuns) -> None:
    async with Client(create_server(real_runs.runs_dir)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("compare_to_baseline", "list_models"):
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
    promote = tools["promote_run"]
    assert promote.annotations is not None and promote.annotations.read_only_hint is False
    assert "reason" not in promote.input_schema["properties"]  # no manual approval over MCP


async def test_compare_to_baseline_and_empty_registry(real_runs: RealRuns) -> None:
    async with Client(create_server(real_runs.runs_dir)) as client:
        err, sc, text = await call(client, "compare_to_baseline", {"run_id": real_runs.solved, "baseline": "preset"})
        assert not err, text
        # It stopped at its own threshold 15; the preset's references are at 475: unknown, said so.
        assert sc["verdict"] == "cannot_compare" and sc["exit_code"] == 2 and sc["p_value"] is not None
        assert sc["reference_source"].startswith("10 solved runs of the CartPole-v1:ppo preset")
        assert "stopped before reaching 475" in sc["summary"]
        err, sc, text = await call(client, "compare_to_baseline", {"run_id": real_runs.short,
                                                                   "baseline": real_runs.short})
        assert not err and sc["verdict"] == "cannot_compare" and sc["exit_code"] == 2
        err, _, text = await call(client, "compare_to_baseline", {"run_id": "zzz", "baseline": "preset"})
        assert err and "no run 'zzz'" in text
        err, sc, text = await call(client, "list_models", {})
        assert not err and sc["models"] == [] and "no model is registered yet" in sc["note"]
        err, _, text = await call(client, "list_models", {"env_id": "CartPole-v1"})
        assert err and "registry is empty" in text


async def test_promote_run_applies_the_policy_and_never_overrides_it(scratch_runs: RealRuns) -> None:
    # Without checkpoints the child `gsolve promote` never needs torch: the test stays fast, and the
    # path through the child process, its JSON and the decision log is the same.
    shutil.rmtree(scratch_runs.runs_dir / scratch_runs.short / rf.CHECKPOINTS_DIR)
    async with Client(create_server(scratch_runs.runs_dir)) as client:
        err, sc, text = await call(client, "promote_run", {"run_id": scratch_runs.short, "episodes": 5})
        assert not err, text
        assert sc["kind"] == "rejected" and sc["actor"] == "mcp" and sc["version"] is None
        assert set(sc["failed_checks"]) == {"solved", "diagnosis", "checkpoint"} and sc["evaluation"] is None
        err, sc, text = await call(client, "list_models", {"env_id": "CartPole-v1"})
        assert not err and sc["models"] == [] and sc["recent_decisions"][0]["kind"] == "rejected"
        err, _, text = await call(client, "promote_run", {"run_id": "nope"})
        assert err and "no run 'nope'" in text
    assert len(reg.read_decisions(scratch_runs.runs_dir, "CartPole-v1")) == 1


async def test_promote_run_respects_the_live_run_cap(real_runs: RealRuns) -> None:
    cap0 = launcher.StartLimits(max_live_runs=0, max_env_steps=launcher.DEFAULT_MAX_ENV_STEPS,
                                max_n_envs=launcher.DEFAULT_MAX_N_ENVS)
    async with Client(create_server(real_runs.runs_dir, cap0)) as client:
        err, _, text = await call(client, "promote_run", {"run_id": real_runs.solved, "episodes": 5})
    assert err and "promote_run re-evaluates in a child process" in text and "gsolve promote RUN" in text
    assert reg.read_decisions(real_runs.runs_dir, "CartPole-v1") == []
