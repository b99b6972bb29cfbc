"""The rl-run-debugger prompt only names tools the server has, metrics the trainer writes, fields and values
the experiment record has, deviation sources and finding ids the diagnosis makes, and fix_run as it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from mcp import Client

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.algorithms import Algo
from gymnasium_solver.diagnostics.models import DeviationSource
from gymnasium_solver.diagnostics.rules import RULE_IDS
from gymnasium_solver.experiments.record import (
    ArmResult,
    ExperimentRecord,
    SeedOutcome,
    Trial,
    TrialOutcome,
    TrialRole,
    Verdict,
    Winner,
)
from gymnasium_solver.experiments.runner import DEFAULT_SEEDS
from gymnasium_solver.jobs.record import JobStatus
from mcp_server.server import create_server

PROMPT = Path(__file__).resolve().parent.parent / ".claude" / "agents" / "rl-run-debugger.md"
TOOL_RE = re.compile(r"mcp__gymnasium-solver__([A-Za-z0-9_]+)")
METRIC_RE = re.compile(r"\b(?:train|eval|rollout|time)/[A-Za-z0-9_]+")
ATTRIBUTION_IDS = {"preset_deviation", "unexplained_failure"}  # findings diagnostics/attribution.py makes


def test_prompt_has_frontmatter_and_leads_with_diagnose_run() -> None:
    text = PROMPT.read_text()
    assert text.startswith("---\nname: rl-run-debugger\n")
    tools = TOOL_RE.findall(text)
    assert tools and tools[0] == "diagnose_run"


def test_prompt_metrics_are_columns_the_trainer_writes() -> None:
    named = set(METRIC_RE.findall(PROMPT.read_text()))
    assert named, "the prompt should point at concrete metrics"
    written = {c for algo in Algo for c in rf.columns_for(algo, grad_norm_parts=True)}
    unknown = named - written
    assert not unknown, f"the prompt names metrics the trainer does not write: {sorted(unknown)}"


@pytest.mark.anyio
async def test_prompt_names_only_tools_the_server_has(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path)) as client:
        have = {t.name for t in (await client.list_tools()).tools}
    named = set(TOOL_RE.findall(PROMPT.read_text()))
    missing = named - have
    assert not missing, f"the prompt names tools the server does not have: {sorted(missing)}"


def _section(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def test_prompt_reads_only_fields_the_experiment_record_has() -> None:
    """Step 4 of the path names what get_fix returns: every backticked name there is a field of
    the record (or of its winner, arms, per-seed outcomes, trials) or one of its values."""
    block = _section(PROMPT.read_text(), "mcp__gymnasium-solver__get_fix(experiment_id)", "5. Answer")
    named = {re.sub(r"\[\d+\]$", "", t) for t in re.findall(r"`([A-Za-z_\[\]0-9]+)`", block)}
    models = (ExperimentRecord, Winner, ArmResult, SeedOutcome, Trial)
    fields = {f for m in models for f in m.model_fields}
    values = {*get_args(Verdict), *get_args(TrialRole), *get_args(TrialOutcome), *get_args(JobStatus), "done"}
    unknown = named - fields - values
    assert not unknown, f"the prompt reads experiment fields that do not exist: {sorted(unknown)}"
    # Every verdict the record can end with is explained, and so is every rung a trial can be on.
    assert set(get_args(Verdict)) - {"running"} <= named
    assert set(get_args(TrialRole)) <= named


def test_prompt_names_every_deviation_source() -> None:
    block = _section(PROMPT.read_text(), "`references.deviations`", "`references.bands`")
    named = set(re.findall(r"`([a-z_]+)`", block))
    assert set(get_args(DeviationSource)) <= named, sorted(named)


def test_prompt_finding_ids_are_ones_the_diagnosis_makes() -> None:
    text = PROMPT.read_text()
    pattern = re.compile(r"finding `([a-z_]+)`|`([a-z_]+)`(?:/`([a-z_]+)`)?\**(?: as the top)? finding")
    named = {x for m in pattern.findall(text) for x in m if x}
    assert "diverged_after_solving" in named
    unknown = named - set(RULE_IDS) - ATTRIBUTION_IDS
    assert not unknown, f"the prompt names findings the diagnosis never makes: {sorted(unknown)}"


@pytest.mark.anyio
async def test_prompt_fix_run_call_matches_the_tool(tmp_path: Path) -> None:
    """The prompt calls fix_run(run_id, seeds=N) with N the tool's default, and reads its max_trials."""
    text = PROMPT.read_text()
    (seeds,) = set(re.findall(r"fix_run\(run_id, seeds=(\d+)\)", text))
    async with Client(create_server(tmp_path)) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "fix_run")
    props = tool.input_schema["properties"]
    assert int(seeds) == props["seeds"]["default"] == DEFAULT_SEEDS
    assert f"Keep `seeds={seeds}` (the default)" in text
    assert f"`max_trials` (default {props['max_trials']['default']})" in text
