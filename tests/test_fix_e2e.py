"""`gsolve fix` and the MCP tools fix_run / get_fix end to end: real trial runs of the
planted learning-rate fault (CartPole-v1:ppo, learning_rate=1e-5, seed 0, from the corpus).

The parent is copied from the corpus, so only the trials train (CartPole solves in ~10k env steps).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from corpus_util import copy_case
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments import read_record
from mcp_server.server import create_server

pytestmark = pytest.mark.slow

# CartPole-v1:ppo's learning rate: what the fault changed.
PRESET_LR = resolve_config("CartPole-v1:ppo").learning_rate.model_dump()  # type: ignore[union-attr]
MAX_WAIT_SECONDS = 300.0  # a bound so a broken coordinator fails the test instead of hanging it


def test_gsolve_fix_runs_trials_and_names_the_solving_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    parent = copy_case("lr_low_s0", runs)
    code = cli.main(["fix", parent, "--runs-dir", str(runs), "--max-trials", "2", "--parallel", "2", "--seeds", "2"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "CANDIDATE" in out and "OUTCOME" in out and "SEED" in out
    verdict = next(line for line in out.splitlines() if line.startswith("Verdict: "))
    assert verdict.startswith("Verdict: fixed.")
    assert f"Fix: learning_rate={{end: {PRESET_LR['end']}, start: {PRESET_LR['start']}}} solves 2 of 2 seeds" in verdict
    assert "Your unchanged config solves 0 of 4 seeds" in verdict  # its own and 3 fresh seeds
    assert "Reproduce: gsolve train CartPole-v1:ppo" in out and "--set seed=0" in out
    assert err.count("[") >= 3  # one progress line per finished trial, on stderr

    exp_id = next(p.stem for p in (runs / ".experiments").glob("fix-*.json"))
    record = read_record(runs, exp_id)
    assert record.status == "done" and record.winner is not None
    assert record.winner.changes["learning_rate"] == PRESET_LR
    assert record.seeds == [0, 1] and record.verdict == "fixed"
    assert record.baseline_seeds == [1, 2, 3]  # 'unlucky seed' rests on three fresh seeds
    assert [t.role for t in record.trials if t.role != "confirm"] == ["screen", "baseline", "screen", "baseline",
                                                                      "baseline", "holdout", "holdout", "holdout"]
    # The winner, once chosen, on fresh seeds after every seed that chose it: reported, never chosen on.
    assert record.holdout_seeds == [4, 5, 6]
    held = record.winner.holdout
    assert held is not None and [o.seed for o in held.per_seed] == [4, 5, 6]
    assert all(t.changes == record.winner.changes for t in record.trials if t.role == "holdout")
    assert f"On 3 fresh seeds it was not chosen on, it solved {held.solved} (seed 4: " in verdict
    for t in record.trials:
        if t.run_id is None:
            continue
        info = rf.read_run_info(runs / t.run_id)
        assert info.parent_run_id == parent and info.experiment_id == exp_id
        assert info.seed == t.seed and info.overrides["learning_rate"] is not None
        assert info.status != rf.RunStatus.RUNNING
    baseline = record.arms[0]
    assert baseline.name == "your config (unchanged)" and baseline.per_seed[0].run_id == parent
    assert [(o.seed, o.solved) for o in baseline.per_seed] == [(0, False), (1, False), (2, False), (3, False)]
    solved = [t for t in record.trials if t.outcome == "solved"]
    assert solved and all(t.solved_at_env_steps for t in solved)
    # The winning trial's run.json records exactly the change that was applied.
    assert rf.read_run_info(runs / record.winner.run_id).applied_changes == record.winner.changes


def test_gsolve_fix_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    parent = copy_case("healthy_s0", runs)
    assert cli.main(["fix", "no-such-run", "--runs-dir", str(runs)]) == 2
    assert cli.main(["fix", parent, "--runs-dir", str(runs)]) == 2  # solved: nothing to fix
    err = capsys.readouterr().err
    assert "no run 'no-such-run'" in err and "already solved" in err
    unsolved = copy_case("lr_low_s0", runs)
    assert cli.main(["fix", unsolved, "--runs-dir", str(runs), "--holdout", "11"]) == 2
    assert "holdout must be between 0 and 10 (fresh seeds the winner trains on once chosen), got 11" in \
        capsys.readouterr().err


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


@pytest.mark.anyio
async def test_fix_run_returns_at_once_then_get_fix_reports_the_winner(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    parent = copy_case("lr_low_s0", runs)
    async with Client(create_server(runs)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["fix_run"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert tools["get_fix"].annotations.read_only_hint is True  # type: ignore[union-attr]

        t0 = time.monotonic()
        is_error, started, text = await call(client, "fix_run", {"run_id": parent, "max_trials": 1, "seeds": 2})
        assert not is_error, text
        assert time.monotonic() - t0 < 30  # it returned before any trial could have finished training
        exp_id = started["experiment_id"]
        assert started["candidates"][0]["changes"]["learning_rate"] == PRESET_LR
        assert "get_fix" in started["note"]

        deadline = time.monotonic() + MAX_WAIT_SECONDS
        while True:
            is_error, rec, text = await call(client, "get_fix", {"experiment_id": exp_id})
            assert not is_error, text
            if rec["status"] != "running" or time.monotonic() > deadline:
                break
            await anyio.sleep(1.0)
        assert rec["status"] == "done", rec["message"]
        assert rec["trials"][0]["outcome"] == "solved" and rec["winner"]["set_args"]
        assert rec["verdict"] == "fixed" and rec["winner"]["seeds_solved"] == 2 and rec["winner"]["seeds"] == 2
        assert rec["winner"]["command"].startswith("gsolve train CartPole-v1:ppo")
        info = rf.read_run_info(runs / rec["winner"]["run_id"])
        assert info.parent_run_id == parent and info.experiment_id == exp_id

        is_error, _, text = await call(client, "get_fix", {"experiment_id": exp_id[:-1] + "x"})
        assert is_error and f"did you mean {exp_id}" in text
