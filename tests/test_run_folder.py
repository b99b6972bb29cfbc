"""The run-folder contract: writer and reader of each file share this one round-trip test."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.algorithms import Algo
from gymnasium_solver.contract.run_folder import M


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
    assert writer.path == path
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


def test_a_heartbeat_counts_as_alive_up_to_the_staleness_window_and_no_further() -> None:
    """HEARTBEAT_STALE_SECONDS is 60 (12 missed 5 s heartbeats): a run of a live process silent for exactly
    the window is still running, a millisecond more and it is crashed. Either side, on a fixed clock."""
    assert (rf.HEARTBEAT_SECONDS, rf.HEARTBEAT_STALE_SECONDS) == (5.0, 60.0)
    beat = "2026-01-01T00:00:00.000+00:00"
    t = rf.parse_iso(beat)
    alive = _info(updated_at=beat)  # our own pid: the process is alive, only the heartbeat can age
    assert rf.effective_status(alive, now=t + 59.999) == rf.RunStatus.RUNNING
    assert rf.effective_status(alive, now=t + 60.0) == rf.RunStatus.RUNNING
    assert rf.effective_status(alive, now=t + 60.001) == rf.RunStatus.CRASHED
    # Another host's pid says nothing here: only the heartbeat decides, with the same window.
    remote = _info(updated_at=beat, pid=2**22 + 12345, host="elsewhere")
    assert rf.effective_status(remote, now=t + 60.0, hostname="here") == rf.RunStatus.RUNNING
    assert rf.effective_status(remote, now=t + 60.001, hostname="here") == rf.RunStatus.CRASHED
    # On the same host a dead pid is crashed at once, whatever the heartbeat.
    assert rf.effective_status(remote, now=t, hostname="elsewhere") == rf.RunStatus.CRASHED
    # An unreadable heartbeat does not make a live run look crashed.
    assert rf.effective_status(_info(updated_at="not a time"), now=t) == rf.RunStatus.RUNNING
    for status in (rf.RunStatus.COMPLETED, rf.RunStatus.FAILED, rf.RunStatus.STOPPED):
        assert rf.effective_status(_info(status=status, updated_at=beat), now=t + 3600) == status


def test_parse_iso_reads_the_offset() -> None:
    assert rf.parse_iso("1970-01-01T00:00:10.500+00:00") == 10.5
    assert rf.parse_iso("1970-01-01T01:00:10.500+01:00") == 10.5


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
    for algo in Algo:  # every column any algorithm writes, the optional per-part gradient norms too
        for column in rf.columns_for(algo, grad_norm_parts=True):
            assert f"`{column}`" in doc, f"docs/metrics.md does not document {column}"
            assert column in rf.METRIC_DESCRIPTIONS


def test_run_ids_made_in_the_same_second_sort_in_creation_order() -> None:
    """@last and every listing take the greatest id as the newest: runs started within one second
    (a fast machine, a sweep) must still sort in creation order."""
    from datetime import UTC, datetime

    times = [datetime(2026, 11, 26, 7, 49, 14, us, tzinfo=UTC) for us in (5, 999, 500_000, 999_999)]
    ids = [rf.new_run_id(t) for t in times]
    assert ids == sorted(ids) and all(rf.RUN_ID_PATTERN.match(i) for i in ids)


# ---------------------------------------------------------------------------------------------
# The small helpers every writer and reader goes through, with exact expectations
# ---------------------------------------------------------------------------------------------
def test_format_value_writes_every_kind_of_value_exactly() -> None:
    assert [rf.format_value(v) for v in (None, True, False, 7, 0.1 + 0.2)] == ["", "1", "0", "7", "0.30000000000000004"]
    assert [rf.format_value(v) for v in (math.nan, math.inf, -math.inf)] == ["nan", "inf", "-inf"]


def test_empty_or_header_only_metrics_are_an_empty_table_and_a_bad_number_names_its_line() -> None:
    for text in ("", "iteration,env_steps"):  # nothing, and a header torn before its newline
        table = rf.parse_metrics_text(text)
        assert (table.columns, table.rows) == ([], []), text
    assert rf.parse_metrics_text("iteration\n1\n").rows == [[1.0]]
    with pytest.raises(ValueError, match="^metrics.csv line 3: could not convert string to float: 'x'$"):
        rf.parse_metrics_text("iteration\n1\nx\n")
    with pytest.raises(KeyError) as missing:
        rf.MetricsTable(["iteration"], [[1.0]]).column("train/nope")
    assert missing.value.args == ("train/nope",)


def test_atomic_writes_go_through_a_hidden_temp_file_beside_the_target(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    replaced: list[tuple[str, str]] = []
    synced: list[int] = []
    real_replace, real_fsync = os.replace, os.fsync
    monkeypatch.setattr(rf.os, "replace", lambda a, b: (replaced.append((str(a), str(b))), real_replace(a, b))[1])
    monkeypatch.setattr(rf.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    target = tmp_path / "a" / "b" / "run.json"  # parents are created
    rf.atomic_write_text(target, "é\n")
    assert target.read_bytes() == "é\n".encode()
    (src, dst), = replaced
    assert dst == str(target) and Path(src).parent == target.parent
    assert Path(src).name.startswith(".run.json.") and src.endswith(".tmp")
    assert len(synced) == 1  # durable by default
    rf.atomic_write_text(target, "x", durable=False)
    assert len(synced) == 1 and target.read_text() == "x"
    # write_run_info is durable unless told otherwise, and indents for people reading run.json.
    info = _info()
    rf.write_run_info(tmp_path, info)
    assert len(synced) == 2 and (tmp_path / rf.RUN_JSON).read_text().startswith('{\n  "schema_version": 1,\n  "run_id": ')
    rf.write_run_info(tmp_path, info, durable=False)
    assert len(synced) == 2
    with pytest.raises(TypeError):
        rf.atomic_write_text(target, 123)  # type: ignore[arg-type]
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.json"]  # the temp file is removed
    assert target.read_text() == "x"


def test_checkpoint_metas_are_ordered_by_env_steps_then_name_and_a_broken_one_is_skipped(tmp_path: Path) -> None:
    def meta(name: str, steps: int) -> rf.CheckpointMeta:
        return rf.CheckpointMeta(name=name, file=f"{name}.pt", env_steps=steps, iteration=1, wall_seconds=0.5,
                                 eval_return_mean=None, created_at="2026-01-01T00:00:00.000+00:00")

    for m in (meta("last", 300), meta("best", 100), meta("step_100", 100)):
        rf.write_checkpoint_meta(tmp_path, m)
    (tmp_path / rf.CHECKPOINTS_DIR / "a_broken.json").write_text("{")  # sorts first: a skip, not a stop
    assert [m.name for m in rf.read_checkpoint_metas(tmp_path)] == ["best", "step_100", "last"]
    assert (tmp_path / rf.CHECKPOINTS_DIR / "best.json").read_text().startswith('{\n  "name": "best"')
    assert rf.read_checkpoint_metas(tmp_path / "none") == []


def test_the_runs_folder_is_the_argument_else_the_environment_else_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rf.RUNS_DIR_ENV, "/somewhere/runs")
    assert rf.resolve_runs_dir("mine") == Path("mine")
    assert rf.resolve_runs_dir() == Path("/somewhere/runs")
    monkeypatch.setenv(rf.RUNS_DIR_ENV, "")
    assert rf.resolve_runs_dir() == Path(rf.DEFAULT_RUNS_DIR)
    monkeypatch.delenv(rf.RUNS_DIR_ENV)
    assert rf.resolve_runs_dir() == Path("runs")


def test_an_imported_run_refuses_writes_naming_where_it_came_from() -> None:
    rf.refuse_read_only(_info(), "resume it")  # our own run: no error
    imported = _info(read_only=True, source={"framework": "sb3", "kind": "sb3_log_folder", "path": "/logs/ppo_1",
                                                  "fingerprint": "f", "imported_at": "2026-01-01T00:00:00+00:00"})
    with pytest.raises(ValueError) as err:
        rf.refuse_read_only(imported, "resume it")
    assert str(err.value).startswith(f"run {imported.run_id} was imported from sb3 (/logs/ppo_1) and is read-only: "
                                     "it cannot be used to resume it. Train a run of our own instead")
    assert str(err.value).endswith("compare it with this one (gsolve compare)")
    with pytest.raises(ValueError, match=r"^run \S+ was imported and is read-only: it cannot be used to resume it\. "):
        rf.refuse_read_only(_info(read_only=True), "resume it")  # imported, origin unknown


def test_run_ids_and_timestamps_have_their_exact_shape() -> None:
    from datetime import UTC, datetime

    run_id = rf.new_run_id(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC))
    assert run_id.startswith("20260102-030405-00006") and len(run_id) == len("20260102-030405-00006") + 2
    assert rf.utc_now_iso().endswith("+00:00")


def test_pid_alive_tells_a_live_process_from_a_dead_and_a_zombie() -> None:
    import subprocess
    import sys

    assert rf.pid_alive(os.getpid())
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert rf.pid_alive(live.pid)
        assert live.poll() is None  # asking must not signal the process
    finally:
        live.kill()
    deadline = time.monotonic() + 10
    while not open(f"/proc/{live.pid}/stat", "rb").read().rsplit(b")", 1)[-1].split()[0] == b"Z":
        assert time.monotonic() < deadline, "the killed child never became a zombie"
        time.sleep(0.01)
    assert not rf.pid_alive(live.pid)  # exited but not reaped: a zombie is not alive
    live.wait()
    assert not rf.pid_alive(live.pid)



def test_pid_alive_reads_the_state_after_the_process_name_whatever_the_name() -> None:
    """/proc/PID/stat is 'pid (name) state ...' and a name may hold ') Z': the state is after the LAST ')'."""
    import subprocess
    import sys

    rename = "import ctypes, time; ctypes.CDLL(None).prctl(15, b'x) Z y', 0, 0, 0); print(flush=True); time.sleep(30)"
    live = subprocess.Popen([sys.executable, "-c", rename], stdout=subprocess.PIPE)
    try:
        assert live.stdout is not None and live.stdout.readline() == b"\n"  # renamed
        assert open(f"/proc/{live.pid}/stat", "rb").read().split(b" ", 1)[1].startswith(b"(x) Z y) ")
        assert rf.pid_alive(live.pid)
    finally:
        live.kill()
        live.wait()


def test_without_proc_pid_alive_asks_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where /proc is absent (macOS) or hidden, signal 0 answers: no such process is dead, one we may not
    signal exists."""
    import subprocess
    import sys

    monkeypatch.setattr(rf, "_PROC_STAT", False)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    sent: list[tuple[int, int]] = []
    real_kill = os.kill
    monkeypatch.setattr(rf.os, "kill", lambda pid, sig: (sent.append((pid, sig)), real_kill(pid, sig))[1])
    try:
        assert rf.pid_alive(live.pid)
        assert sent == [(live.pid, 0)]  # signal 0 only: the process is untouched
    finally:
        live.kill()
        live.wait()
    assert not rf.pid_alive(live.pid)

    def denied(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(rf.os, "kill", denied)
    assert rf.pid_alive(1)


def test_run_ids_are_utc_whatever_the_local_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    monkeypatch.setenv("TZ", "Asia/Tokyo")  # UTC+9 all year
    time.tzset()
    try:
        stamp = datetime.strptime(rf.new_run_id()[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
        assert abs(stamp.timestamp() - time.time()) < 3600  # a local-time id would be 9 h ahead
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("text", ["\n", "\n\n", "\r\n"])
def test_a_metrics_file_without_its_header_is_named_not_a_traceback(text: str) -> None:
    with pytest.raises(ValueError, match="metrics.csv line 1 is empty: expected the header row"):
        rf.parse_metrics_text(text)
