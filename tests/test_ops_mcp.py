"""check_run (`gsolve check`), list_models and promote_run through a real in-process MCP client."""

from __future__ import annotations

import json
import re
import shutil
from typing import Any

import jsonschema
import pytest
from conftest import RealRuns
from mcp import Client

from gymnasium_solver import launcher
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.ops import model_registry as reg
from mcp_server.server import create_server

pytestmark = pytest.mark.anyio


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


async def test_ops_tools_are_registered_with_the_right_annotations(real_runs: RealRuns) -> None:
    async with Client(create_server(real_runs.runs_dir)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("check_run", "list_models"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is True
    promote = tools["promote_run"]
    assert promote.annotations is not None and promote.annotations.read_only_hint is False
    assert "reason" not in promote.input_schema["properties"]  # no manual approval over MCP


async def test_check_run_and_empty_registry(real_runs: RealRuns) -> None:
    async with Client(create_server(real_runs.runs_dir)) as client:
        err, sc, text = await call(client, "check_run", {"run_id": real_runs.solved, "baseline": "preset"})
        assert not err, text
        # It stopped at its own threshold 15; the preset's references are at 475: unknown, said so.
        assert sc["verdict"] == "cannot_compare" and sc["exit_code"] == 2 and sc["p_value"] is not None
        assert re.match(r"\d+ seeds of the CartPole-v1:ppo preset shipped in gymnasium_solver/presets/seed_samples/",
                        sc["reference_source"]), sc["reference_source"]
        assert "stopped before reaching 475" in sc["summary"]
        err, sc, text = await call(client, "check_run", {"run_id": real_runs.short,
                                                                   "baseline": real_runs.short})
        assert not err and sc["verdict"] == "cannot_compare" and sc["exit_code"] == 2
        err, _, text = await call(client, "check_run", {"run_id": real_runs.solved, "baseline": real_runs.short,
                                                        "more_run_ids": [real_runs.short]})
        assert err and "against baseline='preset' only" in text
        err, sc, text = await call(client, "check_run", {"run_id": real_runs.solved, "baseline": "preset",
                                                         "more_run_ids": [real_runs.solved]})
        assert err and "given twice" in text
        err, _, text = await call(client, "check_run", {"run_id": "zzz", "baseline": "preset"})
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


async def test_promote_run_refuses_an_illegal_episode_count_in_one_sentence(real_runs: RealRuns) -> None:
    async with Client(create_server(real_runs.runs_dir)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["promote_run"].input_schema["properties"]["episodes"]
        assert (schema["minimum"], schema["maximum"]) == (2, 200)
        # 1 episode gave a lower bound of -inf that broke the registry (issue 26); the range is the tool's own (the
        # answer said 2 to 1000, the CLI's, so 500 was tried next and refused)
        for bad in (0, 1):
            err, sc, text = await call(client, "promote_run", {"run_id": real_runs.solved, "episodes": bad})
            assert err and sc is None and "\n" not in text
            assert text.endswith(f"episodes must be a whole number from 2 to 200, got {bad}: a lower confidence "
                                 "bound of the mean return needs at least 2 episodes")
        err, _, text = await call(client, "promote_run", {"run_id": real_runs.solved, "episodes": 201})
        assert err and "promote_run evaluates at most 200 episodes, got 201" in text and "gsolve promote" in text
    assert not reg.registry_root(real_runs.runs_dir).exists()


def _legacy_decision_log(runs: RealRuns) -> None:
    """One approval as the 1-episode bug wrote it: lower_bound null (it was -inf)."""
    folder = reg.env_dir(runs.runs_dir, "CartPole-v1")
    shutil.copytree(runs.runs_dir / runs.solved, folder / "v1")
    ev = {"episodes": 1, "seed": 5_000_000, "return_mean": 20.0, "return_std": 0.0, "return_min": 20.0,
          "return_max": 20.0, "lower_bound": None, "confidence": 0.95, "threshold": 15.0, "checkpoint_env_steps": 1}
    line = {"seq": 1, "time": "2026-11-27T00:00:00+00:00", "env_id": "CartPole-v1", "kind": "approved", "version": 1,
            "current_after": 1, "run_id": runs.solved, "evaluation": ev,
            "model_path": ".registry/CartPole-v1/v1/checkpoints/best.pt"}
    (folder / reg.DECISIONS_FILE).write_text(json.dumps(line) + "\n")


async def test_list_models_and_promote_run_match_their_output_schemas_on_a_legacy_registry(
        scratch_runs: RealRuns) -> None:
    _legacy_decision_log(scratch_runs)
    async with Client(create_server(scratch_runs.runs_dir)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        err, sc, text = await call(client, "list_models", {"env_id": "CartPole-v1"})
        assert not err, text
        jsonschema.validate(sc, schemas["list_models"])
        assert sc["current"] == {"CartPole-v1": 1} and sc["recent_decisions"][0]["evaluation"]["lower_bound"] is None
        assert len(sc["log_notes"]) == 1 and "evaluated on 1 episode(s)" in sc["log_notes"][0]
        # The call the issue saw fail: a real re-evaluation in the child process, recorded after the
        # old line (it reused seq 1 and died on "Directory not empty"); the client sees the decision.
        err, sc, text = await call(client, "promote_run", {"run_id": scratch_runs.solved, "episodes": 2})
        assert not err, text
        jsonschema.validate(sc, schemas["promote_run"])
        assert (sc["seq"], sc["kind"], sc["version"]) == (2, "approved", 2), sc
        assert sc["evaluation"]["episodes"] == 2 and isinstance(sc["evaluation"]["lower_bound"], float)
