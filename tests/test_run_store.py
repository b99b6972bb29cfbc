"""run_store: resolving run references safely, and reading metrics fast, incrementally and exactly."""

from __future__ import annotations

import errno
import math
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml

from gymnasium_solver import run_store as rs
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import files as files_mod
from gymnasium_solver.run_store import metrics as metrics_mod

if TYPE_CHECKING:
    from conftest import RealRuns


def make_dirs(root: Path, *names: str) -> None:
    """Run folders as small as a run folder gets: one of the files gsolve writes into every run (an empty run.log)."""
    for n in names:
        (root / n).mkdir(parents=True)
        (root / n / "run.log").touch()


def test_a_folder_with_none_of_a_runs_files_is_not_a_run(tmp_path: Path) -> None:
    """A new user's --runs-dir one level too high listed the project's docs/ and tests/ as 'unreadable' runs, and
    `gsolve show docs` printed a summary of one: such folders are not listed, and naming one says why."""
    make_dirs(tmp_path, "20261125-221900-3fa9")
    (tmp_path / "docs").mkdir()
    assert rs.list_run_ids(tmp_path) == ["20261125-221900-3fa9"]
    with pytest.raises(rs.RunNotFoundError, match="'docs' in .* is not a run: it has none of the files gsolve writes"):
        rs.resolve_run_dir("docs", tmp_path)
    (tmp_path / "20261125-221900-3fa9" / "run.log").unlink()
    assert rs.list_run_ids(tmp_path) == []
    from gymnasium_solver.run_store.refs import no_runs

    assert "none of its 2 folders is one" in no_runs(tmp_path)


# -- resolve_run_dir ---------------------------------------------------------------------------
def test_resolve_full_id_prefix_and_last(tmp_path: Path) -> None:
    make_dirs(tmp_path, "20261125-221900-3fa9", "20261125-221901-aaaa", "20261125-221902-bbbb")
    assert rs.resolve_run_dir("20261125-221901-aaaa", tmp_path) == tmp_path / "20261125-221901-aaaa"
    assert rs.resolve_run_dir("20261125-221900", tmp_path).name == "20261125-221900-3fa9"
    assert rs.resolve_run_dir("@last", tmp_path).name == "20261125-221902-bbbb"


def _write_info(run_dir: Path, **kw: object) -> None:
    info = rf.RunInfo(run_id=run_dir.name, config_id="CartPole-v1:ppo", env_id="CartPole-v1", variant="ppo", algo="ppo",
                      seed=0, created_at="2026-11-25T22:19:00Z", updated_at="2026-11-25T22:19:00Z",
                      max_env_steps=1000, **kw)
    rf.write_run_info(run_dir, info)


def test_last_is_the_newest_run_not_a_fix_or_sweep_trial(tmp_path: Path) -> None:
    """After `gsolve fix RUN`, @last still names the run the user started, as `gsolve runs` lists it."""
    make_dirs(tmp_path, "20261125-221900-3fa9", "20261125-221901-aaaa", "20261125-221902-bbbb", "20261125-221903-cccc")
    _write_info(tmp_path / "20261125-221900-3fa9")
    _write_info(tmp_path / "20261125-221901-aaaa")
    _write_info(tmp_path / "20261125-221902-bbbb", experiment_id="fix-1")
    _write_info(tmp_path / "20261125-221903-cccc", sweep_id="sweep-1")
    assert rs.resolve_run_dir("@last", tmp_path).name == "20261125-221901-aaaa"
    # Only trials: the newest of them.
    for name in ("20261125-221900-3fa9", "20261125-221901-aaaa"):
        _write_info(tmp_path / name, experiment_id="fix-1")
    assert rs.resolve_run_dir("@last", tmp_path).name == "20261125-221903-cccc"


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


def test_only_the_columns_asked_for_are_converted_and_grow_in_step(tmp_path: Path) -> None:
    """Issue 8: memory and cold reads pay for the columns a call needs, not for the whole file."""
    path = tmp_path / rf.METRICS_CSV
    write_rows(path, COLS, [{"iteration": i, rf.M.ENV_STEPS: 64 * i, rf.M.POLICY_LOSS: i / 10} for i in range(1, 4)])
    store = rs.RunStore(tmp_path)
    assert store.metric_columns(tmp_path) == list(COLS)  # the header alone converts only the row keys
    assert store._metrics(tmp_path, ()).arrays.columns == ["iteration", rf.M.ENV_STEPS]
    assert store.last_value(tmp_path, rf.M.POLICY_LOSS) == pytest.approx(0.3)
    held = store._metrics(tmp_path, ())
    assert held.arrays.columns == ["iteration", rf.M.ENV_STEPS, rf.M.POLICY_LOSS]
    small = held.nbytes
    with open(path, "a") as f:
        f.write("4,256,7.5,0.4\n")  # grown: the held columns are extended from where the read stopped
    assert store.last_value(tmp_path, rf.M.POLICY_LOSS) == pytest.approx(0.4)
    assert store.metric_rows(tmp_path) == 4
    values, missing = store.metric_column(tmp_path, rf.M.EVAL_RETURN_MEAN)  # a new column: the union is read
    assert values[3] == 7.5 and missing[:3].all()
    assert store.metric_column(tmp_path, rf.M.ENV_STEPS)[0].tolist() == [64, 128, 192, 256]
    assert store._metrics(tmp_path, ()).nbytes > small
    assert store.metric_arrays(tmp_path).columns == list(COLS)


def test_a_damaged_field_is_named_whichever_columns_are_asked_for(tmp_path: Path) -> None:
    """Issue 26: a read of other columns used to answer where a read of all said malformed."""
    path = tmp_path / rf.METRICS_CSV
    write_rows(path, COLS, [{"iteration": 1, rf.M.ENV_STEPS: 64, rf.M.POLICY_LOSS: 0.5}])
    with open(path, "a") as f:
        f.write("2,128,,oops\n")
    for read in (lambda s: s.metric_rows(tmp_path), lambda s: s.metric_column(tmp_path, rf.M.POLICY_LOSS)):
        with pytest.raises(rs.RunFileError, match="line 3.*'oops' is not a number"):
            read(rs.RunStore(tmp_path))


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
    from gymnasium_solver.cli import app as cli

    assert cli.main(["runs", "--runs-dir", str(real_runs.runs_dir), "--solved"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["RUN", "STATUS"] and len(out) == 2 and out[1].startswith(real_runs.solved)
    assert cli.main(["show", real_runs.short, "--runs-dir", str(real_runs.runs_dir)]) == 0
    shown = capsys.readouterr().out
    assert "completed (budget_exhausted)" in shown and "threshold 475" in shown and "confirmed" not in shown
    assert cli.main(["show", real_runs.solved, "--runs-dir", str(real_runs.runs_dir)]) == 0
    shown = capsys.readouterr().out
    info = rs.RunStore(real_runs.runs_dir).info(real_runs.runs_dir / real_runs.solved)
    assert info.solved_at is not None and info.solved_at.confirm_return_mean is not None
    # The solve's check, from run.json: its mean over the confirmation episodes beside the evaluation's own.
    assert (f"confirmed   mean {info.solved_at.confirm_return_mean:.4g} over {info.solved_at.confirm_episodes} more "
            f"episodes (the solving evaluation's {info.solved_at.eval_return_mean:.4g})") in shown, shown
    assert cli.main(["show", "../etc", "--runs-dir", str(real_runs.runs_dir)]) == 2
    assert "not a run id" in capsys.readouterr().err
    assert cli.main(["runs", "--runs-dir", str(real_runs.runs_dir), "--limit", "0"]) == 2
    assert "limit must be between 1 and 50" in capsys.readouterr().err


# -- issue 8: every run file is read through one function that refuses links and explains OS errors
MARKER = "OUTSIDE-SECRET-7f3a"


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside.txt"
    target.write_text(f"root:x:0:0\n{MARKER}:x:1:1\n")
    return target


def _metrics_run(root: Path) -> Path:
    run = root / "20261125-221900-3fa9"
    run.mkdir(parents=True)
    write_rows(run / rf.METRICS_CSV, COLS, [{"iteration": 1, rf.M.ENV_STEPS: 64}])
    (run / rf.RUN_LOG).write_text("INFO started\n")
    return run


@pytest.mark.parametrize("name", [rf.RUN_LOG, rf.METRICS_CSV, rf.RUN_JSON, rf.CONFIG_YAML])
def test_symlinked_run_file_is_refused_and_never_quoted(tmp_path: Path, name: str) -> None:
    run = _metrics_run(tmp_path / "runs")
    (run / name).unlink(missing_ok=True)
    os.symlink(_outside(tmp_path), run / name)
    store = rs.RunStore(tmp_path / "runs")
    read = {rf.RUN_LOG: lambda: rs.tail_log(run), rf.METRICS_CSV: lambda: store.metric_arrays(run),
            rf.RUN_JSON: lambda: store.info(run), rf.CONFIG_YAML: lambda: store.config(run)}[name]
    with pytest.raises(rs.RunFileError) as err:
        read()
    msg = str(err.value)
    assert "symbolic link" in msg and name in msg and run.name in msg
    assert MARKER not in msg and "root:x" not in msg and str(tmp_path / "outside.txt") not in msg


@pytest.mark.parametrize(("code", "words"), [
    (errno.EACCES, "permission denied"), (errno.ENOSPC, "disk is full"), (errno.EIO, "input/output"),
    (errno.EROFS, "read-only"), (errno.EBUSY, "check the disk"),
])  # fmt: skip
@pytest.mark.parametrize("where", ["_os_open", "_os_read"])
def test_os_errors_become_one_sentence_naming_run_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           code: int, words: str, where: str) -> None:
    run = _metrics_run(tmp_path / "runs")

    def fail(*args: object) -> None:
        raise OSError(code, os.strerror(code), "/etc/passwd")

    monkeypatch.setattr(files_mod, where, fail)
    with pytest.raises(rs.RunFileError) as err:
        rs.RunStore(tmp_path / "runs").metric_arrays(run)
    msg = str(err.value)
    assert words in msg and run.name in msg and rf.METRICS_CSV in msg and "/etc/passwd" not in msg


def test_metrics_csv_that_is_a_directory_or_fifo_is_refused(tmp_path: Path) -> None:
    run = _metrics_run(tmp_path / "runs")
    (run / rf.METRICS_CSV).unlink()
    (run / rf.METRICS_CSV).mkdir()
    with pytest.raises(rs.RunFileError, match="is a directory, not a regular file"):
        rs.RunStore(tmp_path / "runs").metric_arrays(run)
    os.rmdir(run / rf.METRICS_CSV)
    os.mkfifo(run / rf.METRICS_CSV)  # an open() of a FIFO would block forever
    with pytest.raises(rs.RunFileError, match="named pipe"):
        rs.RunStore(tmp_path / "runs").metric_arrays(run)


def test_symlinked_checkpoints_folder_and_metadata_are_not_followed(tmp_path: Path) -> None:
    run = _metrics_run(tmp_path / "runs")
    outside = tmp_path / "ckpt"
    outside.mkdir()
    (outside / "best.json").write_text(f'{{"name": "{MARKER}", "file": "best.pt", "env_steps": 1, "iteration": 1, '
                                       f'"wall_seconds": 1, "created_at": "x"}}')
    os.symlink(outside, run / rf.CHECKPOINTS_DIR)
    assert rs.list_checkpoints(run).checkpoints == []
    os.unlink(run / rf.CHECKPOINTS_DIR)
    (run / rf.CHECKPOINTS_DIR).mkdir()
    os.symlink(outside / "best.json", run / rf.CHECKPOINTS_DIR / "best.json")
    listed = rs.list_checkpoints(run)
    assert listed.checkpoints == [] and "symbolic link" in listed.note and MARKER not in listed.note


# -- issue 8: memory is bounded, and parsing one run never blocks reading another -----------------
def test_cache_stays_under_its_byte_cap_while_reading_more_runs_than_fit(tmp_path: Path) -> None:
    rows: list[dict[str, float | int | None]] = [
        {"iteration": i, rf.M.ENV_STEPS: i * 64, rf.M.POLICY_LOSS: 0.5} for i in range(2000)]
    runs = []
    for k in range(8):
        run = tmp_path / f"20261125-2219{k:02d}-aaaa"
        run.mkdir()
        write_rows(run / rf.METRICS_CSV, COLS, rows)
        runs.append(run)
    one = rs.RunStore(tmp_path).cache
    per_run = 2000 * len(COLS) * 9  # float64 values + bool mask
    store = rs.RunStore(tmp_path, cache_bytes=3 * per_run + 3 * 4096)
    for run in runs * 2:
        assert len(store.metric_arrays(run)) == 2000
        assert store.cache.total_bytes <= store.cache.max_bytes
    assert 1 <= len(store.cache) <= 3 and one.max_bytes == rs.DEFAULT_CACHE_MB << 20


def test_cache_lru_evicts_least_recently_used_and_skips_oversized() -> None:
    lru = rs.ByteLRU(100)
    lru.put("a", 1, 40)
    lru.put("b", 2, 40)
    assert lru.get("a") == 1  # a is now the most recent
    lru.put("c", 3, 40)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.total_bytes == 80
    lru.put("huge", 4, 101)
    assert lru.get("huge") is None and lru.total_bytes == 80


def test_a_long_parse_of_one_run_does_not_block_reading_another(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    slow, fast = _metrics_run(tmp_path / "a"), _metrics_run(tmp_path / "b")
    store = rs.RunStore(tmp_path)
    parsing, release = threading.Event(), threading.Event()
    real_parse = metrics_mod.parse_rows

    def parse(data: bytes, start: int, end: int, ncols: int, first: int, where: str,
              include: list[int] | None = None) -> object:
        if threading.current_thread().name == "slow":
            parsing.set()
            assert release.wait(10), "the test did not release the slow parse"
        return real_parse(data, start, end, ncols, first, where, include)

    monkeypatch.setattr(metrics_mod, "parse_rows", parse)
    t = threading.Thread(target=store.metric_arrays, args=(slow,), name="slow")
    t.start()
    try:
        assert parsing.wait(10)
        # The first parse is stuck inside the cache's loader; another run's read still completes.
        assert len(store.metric_arrays(fast)) == 1
        assert t.is_alive()
    finally:
        release.set()
        t.join(10)
    assert len(store.metric_arrays(slow)) == 1


# -- issue 8: show agrees with diagnose after a SIGKILL; an infinite threshold is "inf" -----------
def test_show_uses_the_last_metrics_row_when_run_json_lags(scratch_runs: RealRuns,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver.cli import app as cli

    run = scratch_runs.runs_dir / scratch_runs.short
    info = rf.read_run_info(run)
    last = rs.RunStore(scratch_runs.runs_dir).last_value(run, rf.M.ENV_STEPS)
    assert last is not None and last > 1000
    # What a SIGKILL leaves: run.json's last heartbeat is behind the last written metrics row.
    lagging = info.model_copy(update={"progress": info.progress.model_copy(update={"env_steps": 1000})})
    rf.write_run_info(run, lagging)
    store = rs.RunStore(scratch_runs.runs_dir)
    assert rs.run_details(store, run).summary.env_steps == int(last)
    assert rs.training_status(store, run).env_steps == int(last)
    assert cli.main(["show", scratch_runs.short, "--runs-dir", str(scratch_runs.runs_dir)]) == 0
    assert f"{int(last) / 1e3:.1f}k / " in capsys.readouterr().out


def test_infinite_reward_threshold_is_inf_in_cli_and_answers(scratch_runs: RealRuns,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver.cli import app as cli

    run = scratch_runs.runs_dir / scratch_runs.short
    # run.json (JSON) can only store an infinite threshold as null; config.yaml keeps `.inf`.
    rf.write_run_info(run, rf.read_run_info(run).model_copy(update={"reward_threshold": math.inf}))
    config = yaml.safe_load((run / rf.CONFIG_YAML).read_text())
    (run / rf.CONFIG_YAML).write_text(yaml.safe_dump({**config, "reward_threshold": math.inf}))
    store = rs.RunStore(scratch_runs.runs_dir)
    assert rs.summarize_run(store, run).model_dump(mode="json")["reward_threshold"] == "inf"
    assert rs.training_status(store, run).model_dump(mode="json")["reward_threshold"] == "inf"
    assert cli.main(["show", scratch_runs.short, "--runs-dir", str(scratch_runs.runs_dir)]) == 0
    assert "(threshold inf)" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# best_run ranks hand-built runs in a known order (a reversed or wrong key would pick another run)
# ---------------------------------------------------------------------------------------------
def _ranked_run(runs: Path, minute: int, *, env: str = "CartPole-v1", algo: str = "ppo", solved_at: int | None = None,
                wall: float = 1.0, best: float | None = None) -> str:
    from datetime import UTC, datetime

    run_id = rf.new_run_id(datetime(2026, 1, 1, 0, minute, tzinfo=UTC))
    info = rf.RunInfo(
        run_id=run_id, config_id=f"{env}:{algo}", env_id=env, variant=algo, algo=algo, seed=minute,
        created_at=rf.utc_now_iso(), updated_at=rf.utc_now_iso(), max_env_steps=100_000,
        status=rf.RunStatus.COMPLETED, reward_threshold=475.0, solved=solved_at is not None,
        solved_at=None if solved_at is None else rf.SolvedAt(env_steps=solved_at, wall_seconds=wall, iteration=1,
                                                              eval_return_mean=500),
        best_eval=None if best is None else rf.EvalRecord(return_mean=best, return_std=0.0, episodes=5,
                                                          env_steps=1000, wall_seconds=wall, iteration=1))
    rf.write_run_info(runs / run_id, info)
    return run_id


def test_best_run_is_the_one_solved_in_fewest_env_steps_then_less_wall_time(tmp_path: Path) -> None:
    slow = _ranked_run(tmp_path, 1, solved_at=30_000, best=500)
    fast = _ranked_run(tmp_path, 2, solved_at=10_000, wall=9.0, best=480)
    tie_quicker = _ranked_run(tmp_path, 3, solved_at=10_000, wall=4.0, best=476)
    _ranked_run(tmp_path, 4, best=499)  # not solved: below every solved run, whatever its eval
    _ranked_run(tmp_path, 5, env="Acrobot-v1", solved_at=1_000, best=-80)  # another environment
    _ranked_run(tmp_path, 6, algo="reinforce", solved_at=5_000, best=500)  # another algorithm
    store = rs.RunStore(tmp_path)
    best = rs.best_run(store, "CartPole-v1", "ppo")
    assert [s.run_id for s in best.ranking] == [tie_quicker, fast, slow]
    assert best.best is not None and best.best.run_id == tie_quicker and best.runs_considered == 4
    assert best.criterion == "solved in the fewest env steps (ties: less wall time)"
    assert "has ended on 1 seed(s): judge it over more" in best.note  # every config here ran one seed
    # Without the algo filter the REINFORCE run (5,000 steps) is the fastest.
    assert [s.solved_at_env_steps for s in rs.best_run(store, "CartPole-v1").ranking] == [5_000, 10_000, 10_000, 30_000]


def _configured(runs: Path, run_id: str, learning_rate: float, trained: int) -> str:
    """Give a ranked run a config (so runs group by it) and the env steps it trained."""
    run = runs / run_id
    info = rf.read_run_info(run)
    rf.write_run_info(run, info.model_copy(update={"progress": rf.Progress(env_steps=trained)}))
    (run / rf.CONFIG_YAML).write_text(yaml.safe_dump({"env_id": "CartPole-v1", "algo": "ppo", "seed": info.seed,
                                                      "learning_rate": learning_rate}))
    return run_id


def test_the_best_config_is_judged_over_its_seeds_not_by_its_luckiest_run(tmp_path: Path) -> None:
    steady = [_configured(tmp_path, _ranked_run(tmp_path, m, solved_at=at, best=480), 0.001, at)
              for m, at in ((1, 10_000), (2, 12_000), (3, 14_000))]
    lucky = _configured(tmp_path, _ranked_run(tmp_path, 4, solved_at=3_000, best=500), 0.01, 3_000)
    unlucky = _configured(tmp_path, _ranked_run(tmp_path, 5, best=150), 0.01, 100_000)
    once = _configured(tmp_path, _ranked_run(tmp_path, 6, solved_at=5_000, best=490), 0.003, 5_000)
    best = rs.best_run(rs.RunStore(tmp_path), "CartPole-v1")
    assert best.best is not None and best.best.run_id == lucky  # the fastest single run is still named
    # 3 of 3 (lower bound 0.44) before 1 of 1 (0.21) before 1 of 2 (0.09), whatever their single fastest run.
    assert [g.run_ids for g in best.configs] == [steady, [once], [lucky, unlucky]]
    first, _, last = best.configs
    assert first.env_steps is not None and (first.env_steps.median, first.env_steps.high) == (12_000, 14_000)
    assert first.solved_share_low == pytest.approx(0.4385, abs=1e-3)
    assert last.env_steps is not None and (last.env_steps.solved, last.env_steps.high) == (1, 100_000)
    assert "learning_rate=0.01) solved 1 of its 2 ended runs" in best.note, best.note
    assert "judge it over more" not in best.note  # the best config has 3 seeds
    alone = tmp_path / "alone"
    _configured(alone, _ranked_run(alone, 1, solved_at=4_000, best=500), 0.001, 4_000)
    assert "has ended on 1 seed(s): judge it over more" in rs.best_run(rs.RunStore(alone), "CartPole-v1").note


def test_with_nothing_solved_the_best_run_is_the_highest_best_eval(tmp_path: Path) -> None:
    low = _ranked_run(tmp_path, 1, best=120.0)
    high = _ranked_run(tmp_path, 2, best=310.5)
    mid = _ranked_run(tmp_path, 3, best=200.0)
    _ranked_run(tmp_path, 4)  # no evaluation yet: not ranked, but considered
    best = rs.best_run(rs.RunStore(tmp_path), "CartPole-v1")
    assert [s.run_id for s in best.ranking] == [high, mid, low]
    assert best.best is not None and best.best.run_id == high and best.runs_considered == 4
    assert best.criterion == "no run solved it; highest best eval return" and best.note == ""


def test_best_run_ranks_at_most_five_and_says_when_nothing_matches(tmp_path: Path) -> None:
    ids = [_ranked_run(tmp_path, m, solved_at=1000 * (10 - m)) for m in range(7)]
    best = rs.best_run(rs.RunStore(tmp_path), "CartPole-v1")
    assert [s.run_id for s in best.ranking] == ids[::-1][:5] and best.runs_considered == 7
    none = rs.best_run(rs.RunStore(tmp_path), "CartPole-v2")
    assert none.best is None and none.ranking == [] and none.runs_considered == 0 and none.criterion == "none"
    assert none.note == ("no runs for 'CartPole-v2'; did you mean CartPole-v1? Environments with runs: CartPole-v1.")
    ppo_only = rs.best_run(rs.RunStore(tmp_path), "CartPole-v1", "dqn")
    assert ppo_only.note == "no runs for 'CartPole-v1' with algo 'dqn'; its runs are of ppo."
    unevaluated = tmp_path / "unevaluated"
    _ranked_run(unevaluated, 1)
    empty = rs.best_run(rs.RunStore(unevaluated), "CartPole-v1")
    assert empty.best is None and empty.ranking == [] and empty.note == "no run has finished an evaluation yet"
    with pytest.raises(ValueError, match="env_id must be a Gymnasium id"):
        rs.best_run(rs.RunStore(tmp_path), " ")


def test_best_run_ranks_zero_and_negative_returns_and_ties_at_zero_wall_time(tmp_path: Path) -> None:
    """Pendulum-like returns (<= 0) rank by value, 0.0 above -50; a solved tie with an unknown (0 s) wall
    time goes first; a run marked solved without a solved_at (nothing to rank it by) is left out."""
    zero = _ranked_run(tmp_path, 1, env="Pendulum-v1", best=0.0)
    worse = _ranked_run(tmp_path, 2, env="Pendulum-v1", best=-50.0)
    better = _ranked_run(tmp_path, 3, env="Pendulum-v1", best=0.5)
    store = rs.RunStore(tmp_path)
    assert [s.run_id for s in rs.best_run(store, "Pendulum-v1").ranking] == [better, zero, worse]
    scored = [_ranked_run(tmp_path, 10 + m, env="Acrobot-v1", best=-100.0 + m) for m in range(7)]
    assert [s.run_id for s in rs.best_run(store, "Acrobot-v1").ranking] == scored[::-1][:5]

    a = _ranked_run(tmp_path, 20, solved_at=8_000, wall=0.5)
    b = _ranked_run(tmp_path, 21, solved_at=8_000, wall=0.0)
    no_step = _ranked_run(tmp_path, 22)
    info = rf.read_run_info(tmp_path / no_step)
    rf.write_run_info(tmp_path / no_step, info.model_copy(update={"solved": True}))
    assert [s.run_id for s in rs.best_run(store, "CartPole-v1").ranking] == [b, a]


def test_best_run_names_close_environments_and_all_it_has(tmp_path: Path) -> None:
    for m, env in enumerate(["CartPole-v0", "CartPole-v2", "CartPole-v3", "CartPole-v4", "Acrobot-v1"]):
        _ranked_run(tmp_path, m, env=env, best=10.0)
    store = rs.RunStore(tmp_path)
    assert rs.best_run(store, "CartPole-v1").note == (
        "no runs for 'CartPole-v1'; did you mean CartPole-v4 or CartPole-v3 or CartPole-v2? Environments with runs: "
        "Acrobot-v1, CartPole-v0, CartPole-v2, CartPole-v3, CartPole-v4.")  # three at most, the closest first
    # 'Acro' matches 'Acrobot-v1' at 0.57: above our cut-off of 0.5, below difflib's default 0.6.
    assert rs.best_run(store, "Acro").note.startswith("no runs for 'Acro'; did you mean Acrobot-v1? Environments")
    assert rs.best_run(store, "MountainCar-v0").note == (
        "no runs for 'MountainCar-v0'. Environments with runs: Acrobot-v1, CartPole-v0, CartPole-v2, CartPole-v3, "
        "CartPole-v4.")
    assert rs.best_run(rs.RunStore(tmp_path / "empty"), "CartPole-v1").note == (
        "no runs for 'CartPole-v1'. Environments with runs: none.")
    with pytest.raises(ValueError, match=r"^env_id must be a Gymnasium id such as 'CartPole-v1'$"):
        rs.best_run(store, "")


@pytest.mark.parametrize(("written", "expected"), [(200, 200.0), (2.5, 2.5), (math.inf, "inf"), (True, None), ("high", None), (None, None)])
def test_a_runs_threshold_comes_from_config_yaml_when_run_json_has_none(tmp_path: Path, written: object,
                                                                         expected: float | None) -> None:
    run_id = _ranked_run(tmp_path, 1)
    run = tmp_path / run_id
    info = rf.read_run_info(run).model_copy(update={"reward_threshold": None})
    rf.write_run_info(run, info)
    (run / rf.CONFIG_YAML).write_text(yaml.safe_dump({"reward_threshold": written}))
    from gymnasium_solver.run_store.summaries import run_threshold

    assert run_threshold(rs.RunStore(tmp_path), run, info) == expected


def test_log_lines_left_out_say_whether_limit_or_size_cut_them(tmp_path: Path) -> None:
    """get_run_logs(limit=3) of a 4-line log said '1 earlier matching lines left out (answers stay under 40000
    characters)': the limit had cut it, and the model was sent to filter instead of raising limit."""
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    (run_dir / rf.RUN_LOG).write_text("".join(f"line {i}\n" for i in range(4)))
    tail = rs.tail_log(run_dir, limit=3)
    assert tail.lines == ["line 1", "line 2", "line 3"]
    assert tail.note == ("1 earlier matching line(s) left out by limit=3 (up to 200); filter by level or contains "
                         "to see specific lines")
    (run_dir / rf.RUN_LOG).write_text("".join(f"{i:03d} " + "x" * 390 + "\n" for i in range(250)))
    tail = rs.tail_log(run_dir, limit=200)
    assert len(tail.lines) < 200
    assert tail.note == (f"50 earlier matching line(s) left out by limit=200; {200 - len(tail.lines)} more left out "
                         "to keep the answer under 40000 characters; filter by level or contains to see specific lines")


def test_comparing_one_run_says_it_is_one_not_the_same_twice(tmp_path: Path) -> None:
    """runs.compare(run) and `gsolve compare CartPole-v1:a2c` (a config with one run) said "['...'] name the same
    run", as if it had been passed twice."""
    one = _ranked_run(tmp_path, 1, best=120.0)
    store = rs.RunStore(tmp_path)
    with pytest.raises(ValueError) as err:
        rs.compare_runs(store, [one])
    assert str(err.value) == f"['{one}'] name one run ({one}); pass at least two different runs"
    with pytest.raises(ValueError) as err:
        rs.compare_runs(store, ["CartPole-v1:ppo"])
    assert str(err.value) == f"['CartPole-v1:ppo'] name one run ({one}); pass at least two different runs"
    with pytest.raises(ValueError) as err:
        rs.compare_runs(store, [one, "@last"])
    assert str(err.value) == f"['{one}', '@last'] name the same run ({one}); pass at least two different runs"


def test_a_metrics_range_past_the_run_says_which_env_steps_it_has(tmp_path: Path) -> None:
    """get_run_metrics(start_env_steps=5000) of a run that ended at 4096 said only 'no rows in the requested
    env-step range', and env_steps_range was empty: the model had to guess the range to ask for."""
    rows: list[dict[str, float | int | None]] = [
        {"iteration": i, rf.M.ENV_STEPS: i * 2048, rf.M.POLICY_LOSS: 0.5} for i in range(1, 3)]
    write_rows(tmp_path / rf.METRICS_CSV, COLS, rows)
    res = rs.query_metrics(rs.RunStore(tmp_path), tmp_path, [rf.M.POLICY_LOSS], start_env_steps=5000)
    assert res.series[0].points_total == 0
    assert res.note == "no rows in the requested env-step range; this run's rows run from env step 2048 to 4096"


def test_a_config_with_no_runs_and_no_close_match_is_one_punctuated_sentence(tmp_path: Path) -> None:
    """`gsolve plot Taxi-v3:dqn` (plot_runs, compare) in a folder of CartPole runs said "no runs of
    'Taxi-v3:dqn' in DIR Configs with runs: ..." with no stop between the two sentences."""
    _ranked_run(tmp_path, 1, best=10.0)
    with pytest.raises(ValueError) as err:
        rs.select_runs(rs.RunStore(tmp_path), ["Taxi-v3:dqn"])
    assert str(err.value) == f"no runs of 'Taxi-v3:dqn' in {tmp_path}. Configs with runs: CartPole-v1:ppo"
