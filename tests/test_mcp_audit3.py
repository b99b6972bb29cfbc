"""New-user audit 3: what the MCP tools answer must be true and said in the tools' own terms (each test
failed before its fix)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio


@pytest.fixture()
async def client(real_runs: RealRuns) -> AsyncIterator[Client]:
    async with Client(create_server(real_runs.runs_dir)) as c:
        yield c


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert "Traceback" not in text
    return res.is_error, (text if res.is_error else res.structured_content)


async def test_get_config_source_says_where_the_settings_came_from(client: Client, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """MountainCar-v0 has no preset of ours: its settings are the RL Zoo's (or, zoo=false, the defaults), not a
    preset's; `source` said 'preset' whatever settings_from said."""
    for args, source in (({"config_id": "CartPole-v1:ppo"}, "preset"),
                         ({"config_id": "MountainCar-v0:ppo"}, "zoo"),
                         ({"config_id": "MountainCar-v0:ppo", "zoo": False}, "default")):
        failed, cfg = await _call(client, "get_config", args)
        assert not failed and cfg["source"] == source and cfg["settings_from"].startswith(f"{source}:"), (args, cfg)
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "CartPole-v1.yaml").write_text("variants:\n  mine: {algo: ppo, n_envs: 2}\n", encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    failed, cfg = await _call(client, "get_config", {"config_id": "CartPole-v1:mine"})
    assert not failed and cfg["source"] == "user_preset" and cfg["settings_from"].startswith("preset:"), cfg


async def test_results_name_the_tools_argument_not_the_command_lines(client: Client, real_runs: RealRuns) -> None:
    """diagnose_run's summary said `try --set learning_rate=...` and start_training's config_notes `set one with
    --set reward_threshold=...`: flags the model cannot pass; a tool's settings are its `overrides`."""
    failed, d = await _call(client, "diagnose_run", {"run_id": real_runs.short})
    assert not failed and "try overrides={" in d["summary"] and "--set" not in str(d), d["summary"]
    failed, cfg = await _call(client, "get_config", {"config_id": "Blackjack-v1:ppo", "overrides": {"n_envs": 2}})
    assert not failed and "--set" not in str(cfg), cfg
    assert any('overrides={"reward_threshold": ...}' in n for n in cfg["notes"]), cfg["notes"]


async def test_start_training_notes_name_the_overrides_argument(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path)) as client:
        failed, started = await _call(client, "start_training", {"config_id": "Blackjack-v1:ppo", "overrides": {
            "max_env_steps": 256, "n_envs": 1, "n_steps": 128, "batch_size": 64, "eval_freq": 256, "eval_episodes": 2}})
        assert not failed, started
        try:
            notes = started["started"]["config_notes"]
            assert any('overrides={"reward_threshold": ...}' in n for n in notes) and "--set" not in str(notes), notes
        finally:
            failed, waited = await _call(client, "get_run_info", {"run_id": started["run_id"], "view": "status",
                                                                  "wait_seconds": 60})
            assert not failed and waited["status"]["finished"], waited
