"""The model registry: `gsolve promote` (approve, reject, manual), `gsolve models`, `gsolve rollback`,
`gsolve eval model:ENV@N`, the append-only decision log and its file lock, on real runs."""

from __future__ import annotations

import json
import math
import multiprocessing
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from conftest import RealRuns
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.ops import model_registry as reg
from gymnasium_solver.ops import promotion
from gymnasium_solver.ops.registry_records import (
    MAX_EPISODES,
    MIN_EPISODES,
    Decision,
    DecisionKind,
    EvaluationSummary,
)

ENV = "CartPole-v1"
EPISODES = "10"


def _gsolve(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _promote(capsys: pytest.CaptureFixture[str], runs: RealRuns, run: str, *extra: str) -> tuple[int, Decision]:
    code, out, err = _gsolve(capsys, "promote", run, "--episodes", EPISODES, "--json", "--runs-dir",
                             str(runs.runs_dir), *extra)
    assert code in (0, 3), err
    return code, Decision.model_validate_json(out)


def test_promote_approves_a_solved_healthy_run_and_eval_works_after_the_run_is_deleted(
        scratch_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    code, d = _promote(capsys, scratch_runs, scratch_runs.solved)
    assert code == 0, d.checks
    assert d.kind == DecisionKind.APPROVED and d.version == 1 and d.current_after == 1 and d.failed_checks == []
    assert [c.name for c in d.checks] == ["solved", "diagnosis", "checkpoint", "evaluation"]
    ev = d.evaluation
    assert ev is not None and ev.episodes == 10 and ev.return_mean >= (ev.threshold or 0)
    assert ev.lower_bound is not None and ev.lower_bound <= ev.return_mean and ev.seed >= 5_000_000  # fresh seeds, never the training evals'
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
    assert code == 3 and rejected.kind == DecisionKind.REJECTED and rejected.version is None
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
    for bad in ("0", "1", "1001"):  # 1 gave a lower bound of -inf and broke the registry (issue 26)
        code, _, err = _gsolve(capsys, "promote", real_runs.solved, "--episodes", bad, "--runs-dir",
                               str(real_runs.runs_dir))
        assert code == 2 and err.count("\n") == 1, err  # one sentence
        assert f"episodes must be a whole number from 2 to 1000, got {bad}: a lower confidence bound" in err
    assert not reg.registry_root(real_runs.runs_dir).exists()  # refused before anything was touched


def _append_rejections(runs_dir: str, worker: int, count: int) -> None:
    for i in range(count):
        reg.record_decision(runs_dir, Decision(seq=0, time="", env_id=ENV, kind=DecisionKind.REJECTED,
                                               run_id=f"w{worker}-{i}", failed_checks=["solved"]), None)


def test_an_unknown_environment_lists_the_ones_with_decisions_not_as_registered(tmp_path: Path) -> None:
    """list_models(env_id='Bogus-v0') said 'registered environments: CartPole-v1' of an environment whose only
    decision was a rejection: nothing was registered for it either."""
    _append_rejections(str(tmp_path), 0, 1)
    with pytest.raises(ValueError) as err:
        reg.list_models(tmp_path, "Bogus-v0")
    assert str(err.value) == f"no model is registered for Bogus-v0; environments with promotion decisions (approved " \
                             f"or not): {ENV}"


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
    # A writer that died mid-line leaves a torn line; the reader names it, the next append is intact
    # and numbered after it (the torn line may have been decision 61: its number is never reused).
    path = reg.env_dir(tmp_path, ENV) / reg.DECISIONS_FILE
    with open(path, "a") as f:
        f.write('{"seq": 61, "kind": "appro')
    assert reg.read_log(tmp_path, ENV).notes == [
        f".registry/{ENV}/decisions.jsonl line 61 is not a readable decision and was not replayed (it has no newline: "
        "a writer is appending it or died mid-line)"]
    _append_rejections(str(tmp_path), 9, 1)
    log = reg.read_log(tmp_path, ENV)
    assert len(log.decisions) == 61 and log.decisions[-1].run_id == "w9-0" and log.decisions[-1].seq == 62
    assert len(log.notes) == 1 and "line 61 is not a readable decision" in log.notes[0]


def test_registry_folder_is_not_a_run(scratch_runs: RealRuns) -> None:
    _append_rejections(str(scratch_runs.runs_dir), 0, 1)
    from gymnasium_solver.run_store import list_run_ids

    assert rf.resolve_runs_dir(scratch_runs.runs_dir).joinpath(reg.REGISTRY_DIR).is_dir()
    assert reg.REGISTRY_DIR not in list_run_ids(scratch_runs.runs_dir)


# ---------------------------------------------------------------------------------------------
# issue 26: the registry accepts only what it can read back
# ---------------------------------------------------------------------------------------------
def _stub_returns(returns: list[float], delay: float = 0.0) -> Any:
    """promotion.run_episodes replaced: ``returns`` cycled to the episodes asked for, no torch."""
    def run(checkpoint: Path, info: rf.RunInfo, episodes: int, seed: int) -> promotion.EpisodeReturns:
        time.sleep(delay)
        return promotion.EpisodeReturns([returns[i % len(returns)] for i in range(episodes)], 1234)
    return mock.patch.object(promotion, "run_episodes", run)


def _legacy_registry(runs: RealRuns) -> Path:
    """A registry as the bug left it: v1 approved on 1 episode, its lower bound -inf written as null."""
    folder = reg.env_dir(runs.runs_dir, ENV)
    stage = reg.stage_checkpoint(runs.runs_dir, runs.runs_dir / runs.solved, ENV)
    stage.rename(folder / "v1")
    ev = EvaluationSummary.model_construct(episodes=1, seed=5_000_000, return_mean=20.0, return_std=0.0,
                                           return_min=20.0, return_max=20.0, lower_bound=-math.inf,
                                           confidence=0.95, threshold=15.0, checkpoint_env_steps=1024)
    d = Decision(seq=1, time="2026-11-27T00:00:00+00:00", env_id=ENV, kind=DecisionKind.APPROVED, version=1,
                 current_after=1, run_id=runs.solved, model_path=f".registry/{ENV}/v1/checkpoints/best.pt")
    line = d.model_copy(update={"evaluation": ev}).model_dump_json()  # what the old writer did
    assert '"lower_bound":null' in line
    (folder / reg.DECISIONS_FILE).write_text(line + "\n")
    return folder


def test_a_registry_left_by_the_one_episode_bug_reads_back_with_a_note_and_keeps_working(
        scratch_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    _legacy_registry(scratch_runs)
    log = reg.read_log(scratch_runs.runs_dir, ENV)
    assert [d.seq for d in log.decisions] == [1] and log.decisions[0].evaluation.lower_bound is None  # type: ignore[union-attr]
    assert len(log.notes) == 1 and log.notes[0].startswith(f".registry/{ENV}/decisions.jsonl line 1: decision #1 "
                                                             "(approved) was evaluated on 1 episode(s)")
    listing = reg.list_models(scratch_runs.runs_dir, ENV)
    assert listing.current == {ENV: 1} and listing.log_notes == log.notes and "see log_notes" in (listing.note or "")
    code, out, _ = _gsolve(capsys, "models", ENV, "--runs-dir", str(scratch_runs.runs_dir))
    assert code == 0 and "note: .registry/CartPole-v1/decisions.jsonl line 1" in out and f"model:{ENV}@1" in out
    # The next decisions are numbered after it; the next approval is v2 (it was "Directory not empty").
    with _stub_returns([20.0, 22.0]):
        d2 = promotion.promote(scratch_runs.runs_dir, scratch_runs.solved, 2)
        d3 = promotion.promote(scratch_runs.runs_dir, scratch_runs.solved, 3)
    assert (d2.seq, d2.kind, d2.version, d3.seq, d3.version) == (2, DecisionKind.APPROVED, 2, 3, 3)
    assert d2.evaluation is not None and d2.evaluation.seed >= 5_001_000  # block 0 was the old decision's
    assert reg.resolve_model(scratch_runs.runs_dir, f"model:{ENV}").version.version == 3


def test_unreadable_lines_are_named_and_numbers_never_collide(scratch_runs: RealRuns) -> None:
    runs_dir = scratch_runs.runs_dir
    folder = _legacy_registry(scratch_runs)
    with open(folder / reg.DECISIONS_FILE, "a") as f:
        f.write('{"seq": 7, "version": 4, "kind": "approved", "lower_bound": Infinity}\n')  # hand-edited
        f.write("not json at all\n")
    (folder / "v9").mkdir()  # a version folder whose decision never made it to the log
    log = reg.read_log(runs_dir, ENV)
    assert len(log.decisions) == 1 and (log.last_seq, log.last_version, log.unread) == (7, 4, 2)
    assert "2 line(s) could not be read" in (reg.list_models(runs_dir, ENV).note or "")
    assert [n.split(" is ")[0] for n in log.notes[1:]] == [f".registry/{ENV}/decisions.jsonl line 2",
                                                          f".registry/{ENV}/decisions.jsonl line 3"]
    assert "not a readable decision and was not replayed (time: Field required)" in log.notes[1]
    assert "Invalid JSON" in log.notes[2]
    with _stub_returns([30.0, 31.0]):
        d = promotion.promote(runs_dir, scratch_runs.solved, 2)
    assert d.kind == DecisionKind.APPROVED and d.seq == 8 and d.version == 10
    assert reg.list_models(runs_dir, ENV).current == {ENV: 10}
    d = reg.rollback(runs_dir, ENV, "back")
    assert (d.seq, d.version, d.current_after) == (9, 1, 1)


def test_the_writer_refuses_a_decision_that_would_not_read_back(scratch_runs: RealRuns) -> None:
    runs_dir = scratch_runs.runs_dir
    for bad in (math.inf, -math.inf, math.nan):
        ev = EvaluationSummary.model_construct(episodes=2, seed=1, return_mean=bad, return_std=0.0, return_min=0.0,
                                               return_max=0.0, lower_bound=0.0, confidence=0.95, threshold=None,
                                               checkpoint_env_steps=0)
        stage = reg.stage_checkpoint(runs_dir, runs_dir / scratch_runs.solved, ENV)
        d = Decision(seq=0, time="", env_id=ENV, kind=DecisionKind.APPROVED).model_copy(update={"evaluation": ev})
        with pytest.raises(ValueError, match=r"refusing to record the approved decision for CartPole-v1: it would not "
                                             r"read back .*return_mean.*only finite numbers are recorded"):
            reg.record_decision(runs_dir, d, stage)
        assert stage.is_dir()  # nothing was registered: the stage was not consumed
        reg.cleanup_stage(stage)
    folder = reg.env_dir(runs_dir, ENV)
    assert not (folder / reg.DECISIONS_FILE).exists() and not (folder / "v1").exists()
    # A record that reads back only with the legacy caveat is refused too.
    ev = EvaluationSummary(episodes=1, seed=1, return_mean=1.0, return_std=0.0, return_min=1.0, return_max=1.0,
                           lower_bound=None, confidence=0.95, threshold=None, checkpoint_env_steps=0)
    with pytest.raises(ValueError, match="without a caveat"):
        reg.readable_line(Decision(seq=1, time="t", env_id=ENV, kind=DecisionKind.REJECTED, evaluation=ev))


@pytest.mark.parametrize("returns", [[math.inf, 20.0], [-math.inf], [math.nan, 20.0], [1e308, 1e308, -1e308]])
def test_non_finite_returns_fail_the_evaluation_and_cannot_be_approved(
        scratch_runs: RealRuns, returns: list[float]) -> None:
    runs_dir = scratch_runs.runs_dir
    with _stub_returns(returns):
        d = promotion.promote(runs_dir, scratch_runs.solved, 4)
        with pytest.raises(ValueError, match="cannot be approved manually"):
            promotion.promote(runs_dir, scratch_runs.solved, 4, approve_manually=True, reason="ship it")
    assert d.kind == DecisionKind.REJECTED and d.failed_checks == ["evaluation"] and d.evaluation is None
    detail = d.checks[-1].detail
    assert "not finite" in detail or "finite numbers" in detail, detail
    assert reg.read_log(runs_dir, ENV) == reg.DecisionLog([d], [], 1, 0, 0)


@pytest.mark.parametrize("n", [2, 3, 189, 1000])
def test_the_largest_finite_returns_summarize_without_an_exception(n: int) -> None:
    """Hypothesis found 189 returns of the largest float: their sum overflows, and so did the sum of
    each divided by 189 (rounding up past the largest float). The mean is the largest float; the
    summary is the finite record or a failed check, never an OverflowError."""
    big = sys.float_info.max
    mean, std = promotion._mean_std([big] * n)
    assert (mean, std) == (big, 0.0)
    played = promotion.EpisodeReturns([big] * n, 0)
    info = rf.RunInfo.model_construct(env_id=ENV, algo="ppo", reward_threshold=475.0)
    result = promotion.summarize(played, info, seed=1)
    assert (result.summary is None) == (not result.check.passed)


def _promote_slowly(runs_dir: str, run: str, out: Any) -> None:
    with _stub_returns([20.0, 21.0], delay=0.5):  # both evaluations overlap in time
        out.put(promotion.promote(runs_dir, run, 5).model_dump_json())


def test_concurrent_promotions_evaluate_on_disjoint_seeds(scratch_runs: RealRuns) -> None:
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_promote_slowly, args=(str(scratch_runs.runs_dir), scratch_runs.solved, out))
             for _ in range(2)]
    for p in procs:
        p.start()
    decisions = [Decision.model_validate_json(out.get(timeout=60)) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    seeds = [set(range(d.evaluation.seed, d.evaluation.seed + 5)) for d in decisions if d.evaluation]
    assert len(seeds) == 2 and not seeds[0] & seeds[1]
    assert sorted(d.version or 0 for d in decisions) == [1, 2]
    # Threads of one process too: every allocation is its own block.
    with ThreadPoolExecutor(8) as pool:
        firsts = list(pool.map(lambda i: reg.allocate_eval_seeds(scratch_runs.runs_dir, ENV, f"t{i}"), range(24)))
    assert len(set(firsts)) == 24 and all((f - reg.REEVAL_SEED_OFFSET) % MAX_EPISODES == 0 for f in firsts)


# ---------------------------------------------------------------------------------------------
# property: any legal promote/rollback sequence leaves a registry that reads back whole
# ---------------------------------------------------------------------------------------------
def _not_json(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON, yet a decision line holds it")


# Returns that pass the run's threshold of 15, any float at all, and the values that broke or could
# break the log.
PASSING = st.floats(15.0, 500.0)
RETURNS = st.one_of(PASSING, st.floats(-40.0, 60.0), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1e308, 15.0]))


def test_any_promote_rollback_sequence_leaves_a_registry_that_reads_back(real_runs: RealRuns) -> None:
    source, run = real_runs.runs_dir / real_runs.solved, real_runs.solved

    class Registry(RuleBasedStateMachine):
        """The model: versions registered and the current one, as the decisions so far imply."""

        def __init__(self) -> None:
            super().__init__()
            self.runs_dir = Path(tempfile.mkdtemp(prefix="registry-property-"))
            shutil.copytree(source, self.runs_dir / run)
            self.versions: list[int] = []
            self.current: int | None = None
            self.recorded = 0

        @rule(pattern=st.lists(RETURNS, min_size=1, max_size=4), episodes=st.integers(MIN_EPISODES, MAX_EPISODES),
              manual=st.booleans())
        def promote(self, pattern: list[float], episodes: int, manual: bool) -> None:
            # The stub cycles the pattern over the episodes asked for: only those returns are drawn.
            finite = all(math.isfinite(pattern[i % len(pattern)]) for i in range(episodes))
            with _stub_returns(pattern):
                try:
                    d = promotion.promote(self.runs_dir, run, episodes, manual, "property" if manual else None)
                except ValueError as exc:  # only a manual approval of returns that cannot be summarized
                    assert manual and "cannot be approved manually" in str(exc), exc
                    return
            self.recorded += 1
            event(f"promote: {d.kind.value}")
            assert d.seq == self.recorded
            if not finite:
                assert d.evaluation is None and d.kind != DecisionKind.APPROVED
            if d.kind in (DecisionKind.APPROVED, DecisionKind.MANUAL_APPROVAL):
                assert d.version == max(self.versions, default=0) + 1
                self.versions.append(d.version)
                self.current = d.version
            else:
                assert d.kind == DecisionKind.REJECTED and d.version is None and not manual

        @rule(pattern=st.lists(PASSING, min_size=1, max_size=2), episodes=st.integers(MIN_EPISODES, MAX_EPISODES))
        def promote_a_passing_run(self, pattern: list[float], episodes: int) -> None:
            self.promote(pattern, episodes, False)  # so that there are versions to roll back to

        @rule()
        def rollback(self) -> None:
            earlier = [v for v in self.versions if self.current is not None and v < self.current]
            try:
                d = reg.rollback(self.runs_dir, ENV, "property")
            except ValueError:
                assert not earlier
                event("rollback: refused")
                return
            event("rollback")
            self.recorded += 1
            assert earlier and (d.seq, d.version, d.current_before) == (self.recorded, max(earlier), self.current)
            self.current = d.version

        @invariant()
        def reads_back_whole(self) -> None:
            log = reg.read_log(self.runs_dir, ENV)
            path = reg.env_dir(self.runs_dir, ENV) / reg.DECISIONS_FILE
            lines = path.read_text().splitlines() if path.exists() else []
            assert log.notes == [] and len(log.decisions) == len(lines) == self.recorded
            assert [d.seq for d in log.decisions] == list(range(1, self.recorded + 1))
            for line in lines:  # strict JSON: no NaN, no Infinity
                json.loads(line, parse_constant=_not_json)
            state = reg.replay(log.decisions)
            assert sorted(state.versions) == self.versions and state.current == self.current
            seeds = [d.evaluation.seed for d in log.decisions if d.evaluation is not None]
            assert len(set(seeds)) == len(seeds)
            if self.current is not None:
                model = reg.resolve_model(self.runs_dir, f"model:{ENV}")
                assert model.version.version == self.current and model.checkpoint.is_file()
                assert reg.list_models(self.runs_dir, ENV).current == {ENV: self.current}

        def teardown(self) -> None:
            shutil.rmtree(self.runs_dir, ignore_errors=True)

    run_state_machine_as_test(Registry, settings=settings(max_examples=15, stateful_step_count=10, deadline=None,
                                                          suppress_health_check=[HealthCheck.too_slow]))
