"""The rl-run-debugger prompt only names tools the server has and metrics the trainer writes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client

from gymnasium_solver import run_folder as rf
from mcp_server.server import create_server

PROMPT = Path(__file__).resolve().parent.parent / ".claude" / "agents" / "rl-run-debugger.md"
TOOL_RE = re.compile(r"mcp__gymnasium-solver__([A-Za-z0-9_]+)")
METRIC_RE = re.compile(r"\b(?:train|eval|rollout|time)/[A-Za-z0-9_]+")


def test_prompt_has_frontmatter_and_leads_with_diagnose_run() -> None:
    text = PROMPT.read_text()
    assert text.startswith("---\nname: rl-run-debugger\n")
    tools = TOOL_RE.findall(text)
    assert tools and tools[0] == "diagnose_run"


def test_prompt_metrics_are_columns_the_trainer_writes() -> None:
    named = set(METRIC_RE.findall(PROMPT.read_text()))
    assert named, "the prompt should point at concrete metrics"
    unknown = named - set(rf.PPO_COLUMNS) - set(rf.COMMON_COLUMNS)
    assert not unknown, f"the prompt names metrics the trainer does not write: {sorted(unknown)}"


@pytest.mark.anyio
async def test_prompt_names_only_tools_the_server_has(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path)) as client:
        have = {t.name for t in (await client.list_tools()).tools}
    named = set(TOOL_RE.findall(PROMPT.read_text()))
    missing = named - have
    assert not missing, f"the prompt names tools the server does not have: {sorted(missing)}"
