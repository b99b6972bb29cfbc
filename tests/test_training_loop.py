"""The training loop's own decisions, each pinned by a run that would end differently without it (the
mutation target `training` of docs/testing.md): what an update is told of its progress, the weights a
non-finite update leaves, how a stop or a failure ends the run, and what is recorded when even the
failure handling meets an error. Tiny PPO runs on CartPole (4 iterations of 256 env steps)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

from gymnasium_solver.agents import ppo
from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train import checkpoint_retention as retention
from gymnasium_solver.train import session, training

SMALL = ["max_env_steps=1024", "eval_freq=512", "n_envs=4", "n_steps=64", "batch_size=128", "n_epochs=2",
         "reward_threshold=1000000"]


def _train(tmp_path: Path, *sets: str) -> tuple[training.TrainResult, rf.RunInfo]:
    result = training.train(resolve_config("CartPole-v1:ppo", [*SMALL, *sets]), tmp_path)
    return result, rf.read_run_info(result.run_dir)


def _model(run_dir: Path, name: str) -> dict[str, torch.Tensor]:
    return torch.load(run_dir / rf.CHECKPOINTS_DIR / f"{name}.pt", weights_only=True)["model"]


def _poison(agent: ppo.PPO) -> None:
    with torch.no_grad():
        next(agent.policy.parameters()).view(-1)[0] = float("nan")


def test_each_update_is_told_the_fraction_of_the_budget_collected(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []
    real = ppo.PPO.update

    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        seen.append(progress)
        return real(self, batch, progress)

    monkeypatch.setattr(ppo.PPO, "update", update)
    result, _ = _train(tmp_path)
    assert result.status == rf.RunStatus.COMPLETED
    assert seen == [0.25, 0.5, 0.75, 1.0]


def test_an_update_leaving_non_finite_weights_fails_the_run_with_the_weights_from_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second update ends with a NaN weight without raising: the run fails non_finite_loss, and `last`
    holds the weights the first update ended with (its periodic checkpoint's)."""
    real, calls = ppo.PPO.update, {"n": 0}

    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        stats = real(self, batch, progress)
        calls["n"] += 1
        if calls["n"] == 2:
            _poison(self)
        return stats

    monkeypatch.setattr(ppo.PPO, "update", update)
    result, info = _train(tmp_path, "checkpoint_freq=256")
    assert (info.status, info.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.NON_FINITE_LOSS)
    assert info.failure is not None
    assert (info.failure.kind, info.failure.message) == ("non_finite_loss", "the update produced non-finite weights")
    assert (info.failure.env_steps, info.failure.iteration) == (512, 2)
    first, last = _model(result.run_dir, retention.periodic_name(256)), _model(result.run_dir, rf.LAST_CHECKPOINT)
    assert last.keys() == first.keys() and all(torch.equal(last[k], first[k]) for k in last)
    assert info.last_eval is not None and info.last_eval.env_steps == 512  # evaluated with the good weights


def test_an_error_after_a_weight_went_non_finite_saves_no_checkpoint_and_skips_the_evaluation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a NonFiniteLossError puts the weights back: after any other error, non-finite weights are
    neither evaluated nor saved as `last`."""

    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        _poison(self)
        raise RuntimeError("boom")

    monkeypatch.setattr(ppo.PPO, "update", update)
    result, info = _train(tmp_path)
    assert (info.status, info.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.ERROR)
    assert info.failure is not None and (info.failure.kind, info.failure.message) == ("RuntimeError", "boom")
    assert info.last_eval is None and info.best_eval is None
    assert not (result.run_dir / rf.CHECKPOINTS_DIR / f"{rf.LAST_CHECKPOINT}.pt").exists()
    assert info.progress.env_steps == 256 and info.finished_at
    assert "could not" not in (result.run_dir / rf.RUN_LOG).read_text()  # nothing was tried with them


def test_a_failure_before_the_agent_exists_is_recorded_at_zero_env_steps(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def no_env(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no such simulator")

    monkeypatch.setattr(session, "make_vec_env", no_env)
    result, info = _train(tmp_path)
    assert (result.status, result.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.ERROR)
    assert info.failure is not None
    assert (info.failure.message, info.failure.env_steps, info.failure.iteration) == ("no such simulator", 0, 0)
    assert info.progress.env_steps == 0 and info.last_eval is None and info.finished_at
    assert "FAILED (error) at 0 env steps, iteration 0: no such simulator" in (result.run_dir / rf.RUN_LOG).read_text()


def test_an_error_without_a_message_is_named_by_its_type_and_its_traceback_logged_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        raise KeyError()

    monkeypatch.setattr(ppo.PPO, "update", update)
    result, info = _train(tmp_path)
    assert info.failure is not None and (info.failure.kind, info.failure.message) == ("KeyError", "KeyError")
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert log.count("Traceback (most recent call last)") == 1
    assert "\n\n" not in log  # the traceback's own trailing newline is not logged as an empty line
    assert log.splitlines()[-1].split(" ", 1)[1] == "finished: failed (error); 256 env steps"
    assert "could not" not in log


def test_an_evaluation_failing_after_a_failure_is_logged_and_the_failure_still_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        raise RuntimeError("boom")

    def evaluate(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("the evaluation env broke too")

    monkeypatch.setattr(ppo.PPO, "update", update)
    monkeypatch.setattr(session, "evaluate", evaluate)
    result, info = _train(tmp_path)
    assert (info.status, info.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.ERROR)
    assert info.failure is not None and info.failure.message == "boom" and info.last_eval is None
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert "could not evaluate after the failure:\nTraceback" in log
    assert "ValueError: the evaluation env broke too" in log
    assert (result.run_dir / rf.CHECKPOINTS_DIR / f"{rf.LAST_CHECKPOINT}.pt").is_file()  # finite weights: kept


@contextmanager
def _stop_requested() -> Iterator[Any]:
    yield lambda: True


def test_a_stop_ends_the_run_after_the_iteration_under_way_with_a_final_evaluation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "stop_on_signals", _stop_requested)
    result, info = _train(tmp_path)
    assert (result.status, result.stop_reason) == (rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED)
    assert info.progress.env_steps == 256 and info.progress.iteration == 1
    assert info.last_eval is not None and info.last_eval.env_steps == 256 and info.failure is None


def test_an_error_while_a_stop_is_requested_is_recorded_as_the_users_stop(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop signal sent to a process group also ends async env workers: the error that follows is the stop."""

    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        raise EOFError()

    monkeypatch.setattr(training, "stop_on_signals", _stop_requested)
    monkeypatch.setattr(ppo.PPO, "update", update)
    result, info = _train(tmp_path)
    assert (result.status, result.stop_reason) == (rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED)
    assert info.failure is not None and (info.failure.kind, info.failure.message) == ("EOFError", "EOFError")
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert "STOPPED (user_stopped) at 256 env steps, iteration 1: EOFError\n" in log
    assert log.count("Traceback (most recent call last)") == 1


class _Evaluations:
    """A stand-in for evaluation.evaluate returning the given means in turn (std 1.5, episode length 10,
    2 episodes), keeping the seed each evaluation was given."""

    def __init__(self, *means: float) -> None:
        self.means, self.seeds = list(means), []  # type: ignore[var-annotated]

    def __call__(self, policy: Any, normalizer: Any, env: Any, seed: int | None) -> Any:
        from gymnasium_solver.train.evaluation import EvalResult

        self.seeds.append(seed)
        mean = self.means.pop(0)
        return EvalResult(mean, 1.5, 10.0, 2, [mean - 1.5, mean + 1.5])


@pytest.mark.parametrize(("means", "best_at"), [((5.0, 3.0), 512), ((5.0, 5.0), 512), ((3.0, 5.25), 1024)])
def test_evaluations_are_seeded_apart_recorded_and_the_best_is_the_first_highest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        means: tuple[float, float], best_at: int) -> None:
    evaluations = _Evaluations(*means)
    monkeypatch.setattr(session, "evaluate", evaluations)
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, "seed=7", "eval_episodes=2"])
    result = training.train(cfg, tmp_path, show_progress=True)
    info = rf.read_run_info(result.run_dir)
    assert evaluations.seeds == [7 + session.EVAL_SEED_OFFSET, 7 + session.EVAL_SEED_OFFSET + 2]
    last, best = info.last_eval, info.best_eval
    assert last is not None and best is not None and result.last_eval == last and result.best_eval == best
    assert (last.return_mean, last.return_std, last.episodes, last.env_steps, last.iteration) == (means[1], 1.5, 2,
                                                                                                  1024, 4)
    assert (best.return_mean, best.env_steps, best.iteration) == (max(means), best_at, best_at // 256)
    assert 0 < best.wall_seconds <= last.wall_seconds <= info.progress.wall_seconds
    assert not info.solved and info.solved_at is None and result.solved_at is None
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert f" eval at 512 env steps: {means[0]:.2f} +- 1.50 over 2 episodes\n" in log
    assert f" eval at 1024 env steps: {means[1]:.2f} +- 1.50 over 2 episodes\n" in log
    err = capsys.readouterr().err  # not a terminal: one plain line per evaluation
    # Returns below 10 print with three decimals (a MiniGrid 0.8725 must not read as its 0.9 threshold).
    assert f"eval at 512/1024 steps (50%): return {means[0]:.3f} ± 1.500 |" in err
    assert f"eval at 1024/1024 steps (100%): return {means[1]:.3f} ± 1.500 |" in err
    table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    assert table.column(rf.M.EVAL_RETURN_MEAN) == [None, means[0], None, means[1]]


def test_a_solving_evaluation_is_recorded_where_and_when_it_happened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(session, "evaluate", _Evaluations(5.0))
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL[:-1], "reward_threshold=4.5"])
    result = training.train(cfg, tmp_path, show_progress=True)
    info = rf.read_run_info(result.run_dir)
    assert (result.status, result.stop_reason, result.solved) == (rf.RunStatus.COMPLETED, rf.StopReason.SOLVED, True)
    solved, last = info.solved_at, info.last_eval
    assert solved is not None and last is not None and result.solved_at == solved
    assert (solved.env_steps, solved.iteration, solved.eval_return_mean) == (512, 2, 5.0)
    assert solved.wall_seconds == last.wall_seconds
    assert info.progress.env_steps == 512 and result.env_steps == 512
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert " eval at 512 env steps: 5.00 +- 1.50 over 2 episodes (solved)\n" in log
    assert f"finished: completed (solved) at 512 env steps, {solved.wall_seconds:.2f}s; 512 env steps\n" in log
    assert "return 5.000 ± 1.500 (solved) |" in capsys.readouterr().err


def test_checkpoints_failing_after_a_failure_are_logged_and_the_failure_still_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        raise RuntimeError("boom")

    def save_checkpoint(*args: Any, **kwargs: Any) -> None:
        raise OSError("the checkpoint folder is gone")

    monkeypatch.setattr(ppo.PPO, "update", update)
    monkeypatch.setattr(session, "save_checkpoint", save_checkpoint)
    result, info = _train(tmp_path)
    assert (info.status, info.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.ERROR)
    assert info.failure is not None and (info.failure.kind, info.failure.message) == ("RuntimeError", "boom")
    assert info.last_eval is not None and info.last_eval.env_steps == 256  # the evaluation before it worked
    assert info.progress.env_steps == 256 and info.finished_at
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert "could not write checkpoints or run.json after the failure:\nTraceback" in log
    assert "OSError: the checkpoint folder is gone" in log and "finished:" not in log


def _last(run_dir: Path) -> dict[str, Any]:
    return torch.load(run_dir / rf.CHECKPOINTS_DIR / f"{rf.LAST_CHECKPOINT}.pt", weights_only=False)


def test_a_completed_runs_last_holds_the_weights_only_and_a_stopped_runs_can_be_resumed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    completed, info = _train(tmp_path / "completed")
    last = _last(completed.run_dir)
    assert (last["env_steps"], last["iteration"]) == (1024, 4) and "training" not in last
    metas = {m.name: m for m in rf.read_checkpoint_metas(completed.run_dir)}
    assert info.last_eval is not None and metas[rf.LAST_CHECKPOINT].eval_return_mean == info.last_eval.return_mean
    monkeypatch.setattr(training, "stop_on_signals", _stop_requested)
    stopped, _ = _train(tmp_path / "stopped")
    last = _last(stopped.run_dir)
    assert (last["env_steps"], last["iteration"]) == (256, 1) and last["training"]["eval_count"] == 1


def test_a_failure_mid_iteration_keeps_the_resumable_last_of_the_iteration_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`last` is written after every iteration here (last_checkpoint_seconds=0); the third update raises,
    after its rollout: `last` stays the second iteration's, which a resume can take."""
    real, calls = ppo.PPO.update, {"n": 0}

    def update(self: ppo.PPO, batch: Any, progress: float) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("boom")
        return real(self, batch, progress)

    monkeypatch.setattr(ppo.PPO, "update", update)
    result, info = _train(tmp_path, "last_checkpoint_seconds=0")
    assert info.failure is not None and (info.failure.env_steps, info.failure.iteration) == (768, 3)
    last = _last(result.run_dir)
    assert (last["env_steps"], last["iteration"]) == (512, 2) and "training" in last
    assert " kept the last resumable `last` checkpoint (the failure was mid-iteration)\n" in (
        result.run_dir / rf.RUN_LOG).read_text()


def test_the_budgets_end_gets_a_final_evaluation_off_the_schedule(tmp_path: Path) -> None:
    """Evaluations every 700 env steps over iterations of 256: at 768 (the first past 700), then at 1024,
    the end of the budget, though the next one was due at 1400."""
    result, info = _train(tmp_path, "eval_freq=700")
    table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    assert [v is not None for v in table.column(rf.M.EVAL_RETURN_MEAN)] == [False, False, True, True]
    assert info.last_eval is not None and info.last_eval.env_steps == 1024


def test_a_disk_refusing_a_metrics_row_is_recorded_with_its_traceback(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from gymnasium_solver.train.run_writer import RunWriteError, RunWriter

    real, calls = RunWriter.append_metrics, {"n": 0}

    def append_metrics(self: RunWriter, row: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RunWriteError(self.run_dir, rf.METRICS_CSV, OSError(errno.ENOSPC, "No space left on device"))
        real(self, row)

    monkeypatch.setattr(RunWriter, "append_metrics", append_metrics)
    result, info = _train(tmp_path)
    assert (info.status, info.stop_reason) == (rf.RunStatus.FAILED, rf.StopReason.ERROR)
    assert info.failure is not None and info.failure.kind == "disk_full"
    assert info.failure.message.startswith(f"writing metrics.csv of run {result.run_id} failed: ")
    assert ", then start it again with `gsolve train CartPole-v1:ppo" in info.failure.message
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert "FAILED (error) at 512 env steps, iteration 2: writing metrics.csv" in log
    assert log.count("Traceback (most recent call last)") == 1


def test_a_run_that_fails_after_solving_keeps_the_first_solving_evaluation(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The solving iteration's metrics row fails: the failure handling evaluates again (solving again), and
    solved_at stays the first evaluation's."""
    from gymnasium_solver.train.run_writer import RunWriter

    real, calls = RunWriter.append_metrics, {"n": 0}

    def append_metrics(self: RunWriter, row: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("metrics sink broke")
        real(self, row)

    monkeypatch.setattr(RunWriter, "append_metrics", append_metrics)
    monkeypatch.setattr(session, "evaluate", _Evaluations(5.0, 5.0))
    result = training.train(resolve_config("CartPole-v1:ppo", [*SMALL[:-1], "reward_threshold=4.5"]), tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert (info.status, info.stop_reason, info.solved) == (rf.RunStatus.FAILED, rf.StopReason.ERROR, True)
    first, second = info.best_eval, info.last_eval
    assert first is not None and second is not None and info.solved_at is not None
    assert first.env_steps == second.env_steps == info.solved_at.env_steps == 512
    assert first.wall_seconds < second.wall_seconds
    assert info.solved_at.wall_seconds == first.wall_seconds


def test_a_failure_run_json_cannot_record_is_said_in_the_result_on_stderr_and_in_run_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """run.json refuses its final write: the run's end becomes a failure of its own, which run.json cannot
    record either."""
    import errno

    from gymnasium_solver.train.run_writer import RunWriteError, RunWriter

    real = RunWriter.write

    def write(self: RunWriter, durable: bool = False) -> None:
        if self.info.finished_at:
            raise RunWriteError(self.run_dir, rf.RUN_JSON, OSError(errno.EACCES, "Permission denied"))
        real(self, durable)

    monkeypatch.setattr(RunWriter, "write", write)
    result, _ = _train(tmp_path)
    assert (result.status, result.failure and result.failure.kind) == (rf.RunStatus.FAILED, "permission_denied")
    refused = f"writing run.json of run {result.run_id} failed: Permission denied (EACCES)"
    assert result.failure is not None and result.failure.message.startswith(refused)
    assert result.failure.message.endswith(f"; {refused}: check the owner and permissions of the run folder, so "
                                           "run.json could not record this failure")
    assert f"gsolve train: run {result.run_id} failed: {result.failure.message}\n" in capsys.readouterr().err
    log = (result.run_dir / rf.RUN_LOG).read_text()
    assert f" run.json could not record the failure: {refused}: check the owner" in log


def test_every_evaluation_starts_its_episodes_on_seeds_no_earlier_one_used(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluation k (from 0) of 3 episodes seeds them from seed + EVAL_SEED_OFFSET + 3k: four evaluations, four
    disjoint seed ranges."""
    evaluations = _Evaluations(1.0, 2.0, 3.0, 4.0)
    monkeypatch.setattr(session, "evaluate", evaluations)
    result, info = _train(tmp_path, "seed=5", "eval_freq=256", "eval_episodes=3")
    assert evaluations.seeds == [5 + session.EVAL_SEED_OFFSET + 3 * k for k in range(4)]
    assert info.last_eval is not None and info.last_eval.return_mean == 4.0


@pytest.mark.parametrize(("poison", "finite"), [(None, True), (float("nan"), False), (float("inf"), False),
                                                 (-float("inf"), False), (3e38, True)])
def test_the_finite_weight_check_finds_one_bad_element_and_no_false_alarm_from_an_overflowing_norm(
        poison: float | None, finite: bool) -> None:
    """tensors_finite checks every weight with one fused norm; 3e38 is finite although the norm overflows to inf,
    so the element-wise confirmation must clear it. An integer buffer is left out (a norm needs floats)."""
    from gymnasium_solver.agents.common import tensors_finite

    tensors = [torch.zeros(3, 4), torch.ones(7), torch.arange(5)]
    if poison is not None:
        tensors[1][4] = poison
    assert tensors_finite(tensors) is finite
    assert tensors_finite([]) and tensors_finite([torch.arange(3)])


def test_how_often_a_run_evaluates_never_changes_what_it_trains(tmp_path: Path) -> None:
    """Evaluation draws nothing from the training RNGs and writes nothing the update reads: evaluating every
    iteration or only at the end trains the same weights (why gsolve may pick eval_freq for a short budget, and
    why a run re-done with more evaluations is the same run observed more often)."""
    often, _ = _train(tmp_path / "often", "eval_freq=256")
    rarely, _ = _train(tmp_path / "rarely", "eval_freq=1024")
    table = {r.run_dir.name: rf.parse_metrics_text((r.run_dir / rf.METRICS_CSV).read_text()) for r in (often, rarely)}
    a, b = (table[r.run_dir.name] for r in (often, rarely))
    assert sum(v is not None for v in a.column(rf.M.EVAL_RETURN_MEAN)) == 4
    assert sum(v is not None for v in b.column(rf.M.EVAL_RETURN_MEAN)) == 1
    assert a.column(rf.M.POLICY_LOSS) == b.column(rf.M.POLICY_LOSS)
    weights_often, weights_rarely = _model(often.run_dir, "last"), _model(rarely.run_dir, "last")
    assert all(torch.equal(weights_often[k], weights_rarely[k]) for k in weights_often)
