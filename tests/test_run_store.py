"""run_store: resolving run references safely, and reading metrics fast, incrementally and exactly."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from gymnasium_solver import run_folder as rf
from gymnasium_solver import run_store as rs

if TYPE_CHECKING:
    from conftest import RealRuns


def make_dirs(root: Path, *names: str) -> None:
    for n in names:
        (root / n).mkdir(parents=True)


# -- resolve_run_dir ---------------------------------------------------------------------------
def test_resolve_full_id_prefix_and_last(tmp_path: Path) -> None:
    make_dirs(tmp_path, "20261125-221900-3fa9", "20261125-221901-aaaa", "20261125-221902-bbbb")
    assert rs.resolve_run_dir("20261125-221901-aaaa", tmp_path) == tmp_path / "20261125-221901-aaaa"
    assert rs.resolve_run_dir("20261125-221900", tmp_path).name == "20261125-221900-3fa9"
    assert rs.resolve_run_dir("@last", tmp_path).name == "20261125-221902-bbbb"


def test_ambiguous_prefix_lists_candidates(tmp_path: Path) -> None:
    make_dirs(tmp_path, "20261125-221901-aaaa", "20261125-221901-aabb")
    with pytest.raises(rs.RunNotFoundError, match="ambiguous.*20261125-221901-aabb.*20261125-221901-aaaa"):
        rs.resolve_run_dir("20261125-221901-aa", tmp_path)


def test_unknown_id_lists_close_matches_and_how_to_list(tmp_path: Path) -> None:
    make_dirs(tmp_path, "20261125-221900-3fa9")
    with pytest.raises(rs.RunNotFoundError) as err:
        rs.resolve_run_dir("20261125-221900-3fa8", tmp_path)
    assert "20261125-221900-3fa9" in str(err.value) and "gsolve runs" in str(err.value)


@pytest.mark.parametrize("ref", ["../x", "..", ".", "/etc/passwd", "a/b", "a\\b", "", "  ", "x\x00y"])
def test_path_like_refs_are_rejected(tmp_path: Path, ref: str) -> None:
    make_dirs(tmp_path / "runs", "20261125-221900-3fa9")
    (tmp_path / "x").mkdir()
    with pytest.raises(rs.RunNotFoundError):
        rs.resolve_run_dir(ref, tmp_path / "runs")


def test_symlink_out_of_runs_folder_is_rejected_and_not_listed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    make_dirs(runs, "20261125-221900-3fa9")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", runs / "20261125-221959-ffff")
    assert rs.list_run_ids(runs) == ["20261125-221900-3fa9"]
    assert rs.resolve_run_dir("@last", runs).name == "20261125-221900-3fa9"
    with pytest.raises(rs.RunNotFoundError):
        rs.resolve_run_dir("20261125-221959-ffff", runs)


def test_empty_or_missing_runs_folder_says_how_to_start(tmp_path: Path) -> None:
    with pytest.raises(rs.RunNotFoundError, match="gsolve train"):
        rs.resolve_run_dir("@last", tmp_path / "nothing")


# -- metrics parsing -----------------------------------------------------------------------------
def write_rows(path: Path, columns: tuple[str, ...], rows: list[dict[str, float | int | None]]) -> None:
    w = rf.MetricsWriter(path, columns)
    for r in rows:
        w.append(r)
    w.close()


COLS = ("iteration", rf.M.ENV_STEPS, rf.M.EVAL_RETURN_MEAN, rf.M.POLICY_LOSS)


def test_arrow_parse_matches_the_contract_parser(tmp_path: Path) -> None:
    rows: list[dict[str, float | int | None]] = [
        {"iteration": i, rf.M.ENV_STEPS: i * 64, rf.M.EVAL_RETURN_MEAN: (i * 1.5 if i % 3 == 0 else None),
         rf.M.POLICY_LOSS: [0.1234567890123, float("nan"), float("inf"), -float("inf"), None, -2e-300][i % 6]}
        for i in range(1, 40)
    ]
    write_rows(tmp_path / rf.METRICS_CSV, COLS, rows)
    expected = rf.parse_metrics_text((tmp_path / rf.METRICS_CSV).read_text())
    got = rs.RunStore(tmp_path).metrics(tmp_path)
    assert got.columns == expected.columns
    for a, b in zip(got.rows, expected.rows, strict=True):
        for x, y in zip(a, b, strict=True):
            assert (x is None and y is None) or (math.isnan(x) and math.isnan(y)) or x == y  # type: ignore[arg-type]


def test_growing_file_is_read_incrementally_and_torn_line_tolerated(tmp_path: Path) -> None:
    path = tmp_path / rf.METRICS_CSV
    write_rows(path, COLS, [{"iteration": 1, rf.M.ENV_STEPS: 64}])
    store = rs.RunStore(tmp_path)
    first = store.metric_arrays(tmp_path)
    assert store.metric_arrays(tmp_path) is first  # unchanged file: cached object, no re-read
    with open(path, "a") as f:
        f.write("2,128,,0.5\n3,19")  # a complete row and a torn one (the writer is mid-line)
    grown = store.metric_arrays(tmp_path)
    assert len(grown) == 2 and grown.values[1, 3] == 0.5 and grown.missing[1, 2]
    assert store._metrics(tmp_path).offset == path.stat().st_size - len("3,19")  # torn tail left unread
    with open(path, "a") as f:
        f.write("2,,nan\n")
    done = store.metric_arrays(tmp_path)
    assert len(done) == 3 and done.values[2, 1] == 192 and np.isnan(done.values[2, 3]) and not done.missing[2, 3]


def test_malformed_row_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / rf.METRICS_CSV
    write_rows(path, COLS, [{"iteration": 1, rf.M.ENV_STEPS: 64}])
    with open(path, "a") as f:
        f.write("2,128,abc,1\n")
    with pytest.raises(rs.RunFileError, match="line 3.*'abc'"):
        rs.RunStore(tmp_path).metrics(tmp_path)


def test_missing_files_raise_run_file_error_naming_the_file(tmp_path: Path) -> None:
    store = rs.RunStore(tmp_path)
    for call, name in ((store.info, rf.RUN_JSON), (store.config, rf.CONFIG_YAML), (store.metrics, rf.METRICS_CSV)):
        with pytest.raises(rs.RunFileError, match=name):
            call(tmp_path)
    (tmp_path / rf.RUN_JSON).write_text("{not json")
    with pytest.raises(rs.RunFileError, match="malformed"):
        store.info(tmp_path)


def test_downsampling_keeps_extremes_first_and_last() -> None:
    y = np.sin(np.linspace(0, 20, 10_001))
    y[4321] = 50.0
    y[777] = -50.0
    idx = rs.downsample_indices(y, 100)
    assert len(idx) <= 100
    assert {0, 10_000, 4321, 777} <= set(idx.tolist())


def test_query_metrics_reports_non_finite_values_apart(tmp_path: Path) -> None:
    rows: list[dict[str, float | int | None]] = [
        {"iteration": i, rf.M.ENV_STEPS: i * 10, rf.M.POLICY_LOSS: float("nan") if i == 500 else float(i)}
        for i in range(1, 5001)
    ]
    write_rows(tmp_path / rf.METRICS_CSV, COLS, rows)
    res = rs.query_metrics(rs.RunStore(tmp_path), tmp_path, [rf.M.POLICY_LOSS], max_points=50)
    s = res.series[0]
    assert s.downsampled and len(s.values) <= 50 and s.points_total == 5000
    assert s.non_finite_count == 1 and s.non_finite == {"nan": [5000]}
    assert s.max == 5000.0 and s.max_at_env_steps == 50_000 and "downsampled" in res.note
    with pytest.raises(ValueError, match="did you mean 'train/policy_loss'"):
        rs.query_metrics(rs.RunStore(tmp_path), tmp_path, ["train/policy_los"])


def test_last_value_and_available_metrics(tmp_path: Path) -> None:
    rows: list[dict[str, float | int | None]] = [
        {"iteration": i, rf.M.ENV_STEPS: i * 10, rf.M.EVAL_RETURN_MEAN: 7.5 if i == 3 else None,
         rf.M.POLICY_LOSS: float("inf") if i == 5 else 0.25}
        for i in range(1, 6)
    ]
    write_rows(tmp_path / rf.METRICS_CSV, COLS, rows)
    store = rs.RunStore(tmp_path)
    assert store.last_value(tmp_path, rf.M.EVAL_RETURN_MEAN) == 7.5
    assert store.last_value(tmp_path, rf.M.ENV_STEPS) == 50
    listed = {m.name: m for m in rs.available_metrics(store, tmp_path).metrics}
    assert listed[rf.M.EVAL_RETURN_MEAN].measured_rows == 1 and listed[rf.M.POLICY_LOSS].last == "inf"


def test_gsolve_runs_and_show(real_runs: RealRuns, capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver import cli

    assert cli.main(["runs", "--runs-dir", str(real_runs.runs_dir), "--solved"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["RUN", "STATUS"] and len(out) == 2 and out[1].startswith(real_runs.solved)
    assert cli.main(["show", real_runs.short, "--runs-dir", str(real_runs.runs_dir)]) == 0
    shown = capsys.readouterr().out
    assert "completed (budget_exhausted)" in shown and "threshold 475" in shown
    assert cli.main(["show", "../etc", "--runs-dir", str(real_runs.runs_dir)]) == 2
    assert "not a run id" in capsys.readouterr().err
    assert cli.main(["runs", "--runs-dir", str(real_runs.runs_dir), "--limit", "0"]) == 2
    assert "limit must be between 1 and 50" in capsys.readouterr().err
