"""bench/bench_loop_limit.py's split of a `gsolve train` process into parts, from a run folder with known times
(the bench itself trains and is run by hand: docs/benchmarks.md, "Speed to the limit")."""

from __future__ import annotations

import csv
import datetime
import json
from pathlib import Path

import pytest
from shared_util import load_bench

T0 = datetime.datetime(2026, 11, 27, 10, 0, 0, tzinfo=datetime.UTC).timestamp()


def _run_folder(tmp_path: Path) -> Path:
    """Four iterations (wall, rollout, update, evaluated): each row's rest beyond rollout + update is 0.1 s, the
    first row's 0.2 s more (setup), the evaluating row's 0.5 s more; 0.1 s from the last row to the end."""
    rows = [(1.0, 0.2, 0.5, False), (1.8, 0.2, 0.5, False), (3.1, 0.2, 0.5, True), (3.9, 0.2, 0.5, False)]
    with (tmp_path / "metrics.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["iteration", "time/wall_seconds", "time/rollout_seconds", "time/update_seconds",
                    "eval/return_mean"])
        for i, (wall, rollout, update, evaluated) in enumerate(rows, 1):
            w.writerow([i, wall, rollout, update, 500.0 if evaluated else ""])
    finished = datetime.datetime.fromtimestamp(T0 + 10.0, datetime.UTC).isoformat(timespec="milliseconds")
    (tmp_path / "run.json").write_text(json.dumps({"progress": {"wall_seconds": 4.0}, "finished_at": finished}),
                                       encoding="utf-8")
    return tmp_path


def test_a_runs_time_is_split_into_collection_update_evaluation_logging_setup_startup_and_exit(tmp_path: Path) -> None:
    bench = load_bench("bench_loop_limit")
    parts = bench.split_run(_run_folder(tmp_path), launched=T0 + 1.0, ended=T0 + 10.5)
    expected = {"total": 9.5, "run": 4.0, "collection": 0.8, "update": 2.0, "evaluation": 0.5, "setup": 0.2,
                "logging_other": 0.5, "startup": 5.0, "exit": 0.5}
    assert parts == pytest.approx(expected)
    assert sum(parts[k] for k in ("collection", "update", "evaluation", "logging_other", "setup", "startup",
                                  "exit")) == pytest.approx(parts["total"])
