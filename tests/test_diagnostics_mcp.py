"""diagnose_run (and its min_severity filter, which was get_metric_alerts) through a real in-process MCP client, on corpus runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from corpus_util import copy_case
from mcp import Client

from gymnasium_solver.contract import run_folder as rf
from mcp_server.server import create_server

pytestmark = pytest.mark.anyio

# "typically under 2,000 tokens" at ~4 characters per token.
MAX_DIAGNOSIS_CHARS = 12_000  # findings, references to the preset and solved runs: ~3k tokens


@pytest.fixture()
def runs(tmp_path: Path) -> dict[str, Any]:
    d = tmp_path / "runs"
    return {"dir": d, "lr_high": copy_case("lr_high_s0", d), "healthy": copy_case("healthy_s0", d),
            "vf": copy_case("vf_starved_s0", d)}


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


async def test_tools_are_registered_read_only(runs: dict[str, Any]) -> None:
    async with Client(create_server(runs["dir"])) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    ann = tools["diagnose_run"].annotations
    assert ann is not None and ann.read_only_hint is True
    assert tools["diagnose_run"].output_schema is not None
    assert "get_metric_alerts" not in tools  # merged into diagnose_run(min_severity=...)


async def test_diagnose_run_names_the_cause_within_budget(runs: dict[str, Any]) -> None:
    async with Client(create_server(runs["dir"])) as client:
        is_error, sc, text = await call(client, "diagnose_run", {"run_id": runs["lr_high"][:15]})
    assert not is_error, text
    assert sc["run_id"] == runs["lr_high"] and sc["verdict"] == "warning" and not sc["partial"]
    top = sc["findings"][0]
    assert top["suggested_changes"][0]["key"] == "learning_rate"
    assert top["suggested_changes"][0]["direction"] == "decrease"
    assert sc["returns"]["gap_abs"] > 0 and sc["eval_trend"]["direction"] in ("improving", "flat", "declining")
    assert len(json.dumps(sc)) < MAX_DIAGNOSIS_CHARS


async def test_min_severity_keeps_only_the_alerts(runs: dict[str, Any]) -> None:
    async with Client(create_server(runs["dir"])) as client:
        _, healthy, _ = await call(client, "diagnose_run", {"run_id": runs["healthy"], "min_severity": "warning"})
        _, vf, _ = await call(client, "diagnose_run", {"run_id": runs["vf"], "min_severity": "critical"})
        _, vf_all, _ = await call(client, "diagnose_run", {"run_id": runs["vf"]})
        bad, _, text = await call(client, "diagnose_run", {"run_id": runs["vf"], "min_severity": "loud"})
    assert healthy["findings"] == [] and healthy["verdict"] == "healthy"
    assert vf["findings"] == [] and len(vf_all["findings"]) >= 1
    assert f"{len(vf_all['findings'])} finding(s) below critical left out (min_severity)" in vf["notes"]
    assert vf_all["findings"][0]["id"] == "explained_variance_low" and vf["summary"] == vf_all["summary"]
    assert bad and "Traceback" not in text


async def test_unknown_run_is_an_actionable_error(runs: dict[str, Any]) -> None:
    typo = runs["vf"][:-1] + ("0" if runs["vf"][-1] != "0" else "1")
    async with Client(create_server(runs["dir"])) as client:
        is_error, _, text = await call(client, "diagnose_run", {"run_id": typo})
        is_error2, _, text2 = await call(client, "diagnose_run", {"run_id": "../etc"})
    assert is_error and "Traceback" not in text and runs["vf"] in text  # close match offered
    assert is_error2 and "Traceback" not in text2


async def test_live_run_is_reported_as_partial(runs: dict[str, Any]) -> None:
    run_dir = runs["dir"] / runs["vf"]
    info = rf.read_run_info(run_dir)
    live = info.model_copy(update={"status": rf.RunStatus.RUNNING, "stop_reason": None, "pid": os.getpid(),
                                   "host": None, "updated_at": rf.utc_now_iso(), "finished_at": None})
    rf.write_run_info(run_dir, live)
    async with Client(create_server(runs["dir"])) as client:
        is_error, sc, text = await call(client, "diagnose_run", {"run_id": runs["vf"]})
    assert not is_error, text
    assert sc["partial"] is True and sc["status"] == "running"
    assert any("still running" in n for n in sc["notes"])
    assert sc["progress"]["eta_seconds"] is not None
    assert "budget_exhausted_improving" not in [f["id"] for f in sc["findings"]]
