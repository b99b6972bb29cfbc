"""The run-folder contract: writer and reader of each file share this one round-trip test."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from gymnasium_solver import run_folder as rf
from gymnasium_solver.run_folder import M


def _info(**kw) -> rf.RunInfo:
    base = dict(
        run_id=rf.new_run_id(),
        config_id="CartPole-v1:ppo",
        env_id="CartPole-v1",
        variant="ppo",
        algo="ppo",
        seed=0,
        created_at=rf.utc_now_iso(),
        updated_at=rf.utc_now_iso(),
        max_env_steps=1000,
        pid=os.getpid(),
    )
    base.update(kw)
    return rf.RunInfo.model_validate(base)


def test_metrics_round_trip_keeps_full_precision_missing_and_non_finite(tmp_path: Path) -> None:
    path = tmp_path / rf.METRICS_CSV
    writer = rf.MetricsWriter(path, rf.columns_for("ppo"))
    writer.append({M.ITERATION: 1, M.ENV_STEPS: 512, M.POLICY_LOSS: 0.1 + 0.2, M.EVAL_RETURN_MEAN: None})
    writer.append({M.ITERATION: 2, M.ENV_STEPS: 1024, M.POLICY_LOSS: float("nan"), M.VALUE_LOSS: float("inf")})
    writer.close()

    table = rf.parse_metrics_text(path.read_text())
    assert table.columns == list(rf.PPO_COLUMNS)
    assert len(table) == 2
    assert table.column(M.POLICY_LOSS)[0] == 0.1 + 0.2  # repr round-trips exactly
    assert math.isnan(table.column(M.POLICY_LOSS)[1])
    assert table.column(M.VALUE_LOSS) == [None, math.inf]
    assert table.column(M.EVAL_RETURN_MEAN) == [None, None]
    with pytest.raises(KeyError):
        table.column("train/not_a_metric")


def test_writer_refuses_undeclared_columns_and_appends_without_rewriting(tmp_path: Path) -> None:
    path = tmp_path / rf.METRICS_CSV
    writer = rf.MetricsWriter(path, rf.columns_for("reinforce"))
    with pytest.raises(KeyError, match="approx_kl"):
        writer.append({M.APPROX_KL: 0.1})
    writer.append({M.ITERATION: 1})
    writer.close()
    # Reopening (e.g. a resumed writer) appends rows, never a second header.
    writer = rf.MetricsWriter(path, rf.columns_for("reinforce"))
    writer.append({M.ITERATION: 2})
    writer.close()
    assert rf.parse_metrics_text(path.read_text()).column(M.ITERATION) == [1.0, 2.0]


def test_torn_last_line_is_dropped_and_malformed_line_is_named() -> None:
    table = rf.parse_metrics_text("iteration,env_steps\n1,10\n2,2")
    assert table.rows == [[1.0, 10.0]]
    with pytest.raises(ValueError, match="line 3"):
        rf.parse_metrics_text("iteration,env_steps\n1,10\n2\n")


def test_run_info_round_trip_and_unknown_keys_from_newer_writers(tmp_path: Path) -> None:
    info = _info(solved=True, solved_at=rf.SolvedAt(env_steps=100, wall_seconds=1.5, iteration=3, eval_return_mean=500))
    rf.write_run_info(tmp_path, info)
    assert rf.read_run_info(tmp_path) == info
    (tmp_path / rf.RUN_JSON).write_text(info.model_dump_json()[:-1] + ', "added_in_v9": 1}')
    assert rf.read_run_info(tmp_path).run_id == info.run_id
    (tmp_path / rf.RUN_JSON).write_text("{not json")
    with pytest.raises(ValueError, match="malformed"):
        rf.read_run_info(tmp_path)


def test_checkpoint_meta_round_trip(tmp_path: Path) -> None:
    meta = rf.CheckpointMeta(name="best", file="best.pt", env_steps=10, iteration=1, wall_seconds=0.5,
                             eval_return_mean=12.0, created_at=rf.utc_now_iso())
    rf.write_checkpoint_meta(tmp_path, meta)
    (tmp_path / rf.CHECKPOINTS_DIR / "broken.json").write_text("{")
    assert rf.read_checkpoint_metas(tmp_path) == [meta]


def test_crash_detection_dead_pid_and_stale_heartbeat() -> None:
    assert rf.effective_status(_info()) == rf.RunStatus.RUNNING
    assert rf.effective_status(_info(pid=2**22 + 12345)) == rf.RunStatus.CRASHED
    stale = _info(updated_at="2020-01-01T00:00:00.000+00:00")
    assert rf.effective_status(stale, now=time.time()) == rf.RunStatus.CRASHED
    finished = _info(status=rf.RunStatus.COMPLETED, pid=2**22 + 12345)
    assert rf.effective_status(finished) == rf.RunStatus.COMPLETED


def test_run_ids_sort_chronologically() -> None:
    from datetime import UTC, datetime

    a = rf.new_run_id(datetime(2026, 1, 1, tzinfo=UTC))
    b = rf.new_run_id(datetime(2026, 1, 2, tzinfo=UTC))
    assert a < b
    assert rf.RUN_ID_PATTERN.match(a)


def test_every_metric_is_documented() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "metrics.md").read_text()
    for column in rf.PPO_COLUMNS:
        assert f"`{column}`" in doc, f"docs/metrics.md does not document {column}"
        assert column in rf.METRIC_DESCRIPTIONS


def test_run_ids_made_in_the_same_second_sort_in_creation_order() -> None:
    """@last and every listing take the greatest id as the newest: runs started within one second
    (a fast machine, a sweep) must still sort in creation order."""
    from datetime import UTC, datetime

    times = [datetime(2026, 11, 26, 7, 49, 14, us, tzinfo=UTC) for us in (5, 999, 500_000, 999_999)]
    ids = [rf.new_run_id(t) for t in times]
    assert ids == sorted(ids) and all(rf.RUN_ID_PATTERN.match(i) for i in ids)
