"""The model registry: `gsolve promote` (approve, reject, manual), `gsolve models`, `gsolve rollback`,
`gsolve eval model:ENV@N`, the append-only decision log and its file lock, on real runs."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pytest
from conftest import RealRuns

from gymnasium_solver import cli
from gymnasium_solver import model_registry as reg
from gymnasium_solver import run_folder as rf
from gymnasium_solver.model_registry import Decision, DecisionKind

ENV = "CartPole-v1"
EPISODES = "10"


def _gsolve(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _promote(capsys: pytest.CaptureFixture[str], runs: RealRuns, run: str, *extra: str) -> tuple[int, Decision]:
    code, out, err = _gsolve(capsys, "promote", run, "--episodes", EPISODES, "--json", "--runs-dir",
                             str(runs.runs_dir), *extra)
    assert code in (0, 1), err
    return code, Decision.model_validate_json(out)


def test_promote_approves_a_solved_healthy_run_and_eval_works_after_the_run_is_deleted(
        scratch_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    code, d = _promote(capsys, scratch_runs, scratch_runs.solved)
    assert code == 0, d.checks
    assert d.kind == DecisionKind.APPROVED and d.version == 1 and d.current_after == 1 and d.failed_checks == []
    assert [c.name for c in d.checks] == ["solved", "diagnosis", "checkpoint", "evaluation"]
    ev = d.evaluation
    assert ev is not None and ev.episodes == 10 and ev.return_mean >= (ev.threshold or 0)
    assert ev.lower_bound <= ev.return_mean and ev.seed >= 5_000_000  # fresh seeds, never the training evals'
    assert d.model_path and (scratch_runs.runs_dir / d.model_path).is_file()
    # The registry holds its own copy: deleting the run does not break the model.
    shutil.rmtree(scratch_runs.runs_dir / scratch_runs.solved)
    code, out, err = _gsolve(capsys, "eval", f"model:{ENV}@1", "--episodes", "3", "--runs-dir",
                             str(scratch_runs.runs_dir))
    assert code == 0, err
    assert out.startswith(f"model:{ENV}@1 (run {scratch_runs.solved}") and "over 3 episodes" in out
    code, _, err = _gsolve(capsys, "eval", "model:CartPole-v1@7", "--runs-dir", str(scratch_runs.runs_dir))
    assert code == 2 and "has no version 7; its versions: 1" in err
    code, _, err = _gsolve(capsys, "eval", "model:CartPol-v1", "--runs-dir", str(scratch_runs.runs_dir))
    assert code == 2 and "did you mean CartPole-v1" in err


def test_reject_then_manual_approval_then_rollback_all_recorded(
        scratch_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    runs = scratch_runs
    code, rejected = _promote(capsys, runs, runs.short)
    assert code == 1 and rejected.kind == DecisionKind.REJECTED and rejected.version is None
    assert "solved" in rejected.failed_checks and rejected.evaluation is not None  # the summary is recorded too
    code, out, err = _gsolve(capsys, "promote", runs.short, "--approve-manually", "--runs-dir", str(runs.runs_dir))
    assert code == 2 and "needs --reason" in err
    code, manual = _promote(capsys, runs, runs.short, "--approve-manually", "--reason", "demo build, known short")
    assert code == 0 and manual.kind == DecisionKind.MANUAL_APPROVAL and manual.version == 1
    assert manual.reason == "demo build, known short" and "solved" in manual.failed_checks
    code, approved = _promote(capsys, runs, runs.solved)
    assert code == 0 and approved.kind == DecisionKind.APPROVED and approved.version == 2

    code, out, _ = _gsolve(capsys, "models", ENV, "--decisions", "--runs-dir", str(runs.runs_dir))
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("*") and f"model:{ENV}@2" in lines[1] and runs.solved in lines[1]
    assert f"model:{ENV}@1" in lines[2] and not lines[2].startswith("*") and "manual_approval" in lines[2]
    assert "rejected" in out and "failed: solved" in out and "reason: demo build" in out

    code, out, _ = _gsolve(capsys, "rollback", ENV, "--reason", "v2 misbehaves", "--runs-dir", str(runs.runs_dir))
    assert code == 0 and "rolled back from v2 to v1" in out
    listing = reg.list_models(runs.runs_dir, ENV)
    assert listing.current == {ENV: 1} and [m.version for m in listing.models if m.current] == [1]
    code, _, err = _gsolve(capsys, "rollback", ENV, "--runs-dir", str(runs.runs_dir))
    assert code == 2 and "no approved version before the current one (v1)" in err
    code, out, _ = _gsolve(capsys, "eval", f"model:{ENV}", "--episodes", "2", "--runs-dir", str(runs.runs_dir))
    assert code == 0 and out.startswith(f"model:{ENV}@1 (run {runs.short}")

    # Append-only: every decision is a line, in order, with its number; nothing was rewritten.
    log = (reg.env_dir(runs.runs_dir, ENV) / reg.DECISIONS_FILE).read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in log]
    assert kinds == ["rejected", "manual_approval", "approved", "rollback"]
    assert [json.loads(line)["seq"] for line in log] == [1, 2, 3, 4]
    assert Decision.model_validate_json(log[0]) == rejected


def test_models_and_rollback_explain_an_empty_registry(real_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _gsolve(capsys, "models", "--runs-dir", str(real_runs.runs_dir))
    assert code == 0 and "no model is registered yet" in out
    code, _, err = _gsolve(capsys, "rollback", ENV, "--runs-dir", str(real_runs.runs_dir))
    assert code == 2 and "registry is empty" in err
    code, _, err = _gsolve(capsys, "promote", "nope", "--runs-dir", str(real_runs.runs_dir))
    assert code == 2 and "no run 'nope'" in err
    code, _, err = _gsolve(capsys, "promote", real_runs.solved, "--episodes", "0", "--runs-dir", str(real_runs.runs_dir))
    assert code == 2 and "--episodes must be between 1 and 1000" in err


def _append_rejections(runs_dir: str, worker: int, count: int) -> None:
    for i in range(count):
        reg.record_decision(runs_dir, Decision(seq=0, time="", env_id=ENV, kind=DecisionKind.REJECTED,
                                               run_id=f"w{worker}-{i}", failed_checks=["solved"]), None)


def test_concurrent_writers_never_corrupt_the_log(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_rejections, args=(str(tmp_path), w, 15)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    decisions = reg.read_decisions(tmp_path, ENV)
    assert len(decisions) == 60
    assert [d.seq for d in decisions] == list(range(1, 61))  # numbered under the lock: no gaps, no repeats
    assert len({d.run_id for d in decisions}) == 60
    # A writer that died mid-line leaves a torn line; it is skipped and the next append is intact.
    path = reg.env_dir(tmp_path, ENV) / reg.DECISIONS_FILE
    with open(path, "a") as f:
        f.write('{"seq": 61, "kind": "appro')
    _append_rejections(str(tmp_path), 9, 1)
    decisions = reg.read_decisions(tmp_path, ENV)
    assert len(decisions) == 61 and decisions[-1].run_id == "w9-0" and decisions[-1].seq == 61


def test_registry_folder_is_not_a_run(scratch_runs: RealRuns) -> None:
    _append_rejections(str(scratch_runs.runs_dir), 0, 1)
    from gymnasium_solver.run_store import list_run_ids

    assert rf.resolve_runs_dir(scratch_runs.runs_dir).joinpath(reg.REGISTRY_DIR).is_dir()
    assert reg.REGISTRY_DIR not in list_run_ids(scratch_runs.runs_dir)
