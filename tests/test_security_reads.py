"""Issue 26, reads: a run folder or an import source from someone else cannot pin a core, hide what is
wrong with it, or make gsolve read (and quote) a file outside the folder it was given.

Each test is one attack of the probe. Work is counted, never timed (bench/bench_run_store.py prints
the 100k-column figure).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from gymnasium_solver import run_store as rs
from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.diagnostics import diagnose_run_dir
from gymnasium_solver.imports import ImportError_, import_runs
from gymnasium_solver.run_store import metrics as metrics_mod
from gymnasium_solver.run_store.limits import MAX_METRIC_COLUMNS, MAX_METRICS_LINE_BYTES
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
SECRET = "SECRET-FIRST-LINE-of-a-file-outside"

Reader = Callable[[rs.RunStore, Path], Any]
READERS: dict[str, Reader] = {
    "get_run_metrics": lambda store, d: rs.query_metrics(store, d),
    "get_run_metrics of one metric": lambda store, d: rs.query_metrics(store, d, [rf.M.ENTROPY]),
    "get_run_metrics catalog": rs.available_metrics,
    "metric_arrays": lambda store, d: store.metric_arrays(d),
    "diagnose_run": diagnose_run_dir,
}


def _run(scratch_runs: RealRuns) -> Path:
    return scratch_runs.runs_dir / scratch_runs.short


def _verdicts(run_dir: Path) -> set[str]:
    """The sentence each reader refuses the run's metrics.csv with (a fresh store each: no cache)."""
    out = set()
    for name, read in READERS.items():
        with pytest.raises(rs.RunFileError) as got:
            read(rs.RunStore(run_dir.parent), run_dir)
        out.add(str(got.value))
        assert "Traceback" not in str(got.value), name
    return out


def _wide_csv(ncols: int, rows: int = 3) -> str:
    cols = [*rf.PPO_COLUMNS, *(f"x{j}" for j in range(ncols - len(rf.PPO_COLUMNS)))]
    body = "".join(",".join([str(i), str(512 * i), *("0.5" for _ in cols[2:])]) + "\n" for i in range(1, rows + 1))
    return ",".join(cols) + "\n" + body


@pytest.mark.parametrize("ncols", [10_000, 30_000, 100_000])
def test_a_metrics_csv_of_many_columns_is_refused_in_one_sentence_by_every_reader(scratch_runs: RealRuns,
                                                                                 ncols: int) -> None:
    run_dir = _run(scratch_runs)
    (run_dir / rf.METRICS_CSV).write_text(_wide_csv(ncols))
    (msg,) = _verdicts(run_dir)
    assert msg.startswith(f"run {run_dir.name}: metrics.csv has ")
    assert f"more than the {MAX_METRIC_COLUMNS} the run store reads" in msg
    header_bytes = (run_dir / rf.METRICS_CSV).read_text().index("\n")
    if header_bytes <= MAX_METRICS_LINE_BYTES:
        assert f"has {ncols:,} columns" in msg
    else:  # only the first 64 KB of a header are read to refuse it
        assert "has more than " in msg


def test_metric_reads_do_the_same_work_for_30_and_3000_columns(scratch_runs: RealRuns,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's 10k columns took 10 s because each column asked for re-read and re-scanned the
    header. Counted here: the reads of the file per answer, which must not grow with the columns."""
    monkeypatch.setattr(metrics_mod, "MAX_METRIC_COLUMNS", 5000)
    reads: list[str] = []
    real_read = metrics_mod.read_run_file

    def counting_read(*args: Any, **kwargs: Any) -> Any:
        reads.append("read")
        return real_read(*args, **kwargs)

    monkeypatch.setattr(metrics_mod, "read_run_file", counting_read)
    work: dict[int, list[int]] = {}
    for ncols in (30, 3000):
        run_dir = _run(scratch_runs)
        (run_dir / rf.METRICS_CSV).write_text(_wide_csv(ncols, rows=50))
        work[ncols] = []
        for read in READERS.values():
            reads.clear()
            read(rs.RunStore(run_dir.parent), run_dir)
            work[ncols].append(len(reads))
    assert work[30] == work[3000]  # a read is linear in the file: so is every answer


def test_damage_in_a_column_not_asked_for_gets_the_same_sentence_from_every_reader(scratch_runs: RealRuns) -> None:
    """get_run_metrics converts only the columns it returns; it used to answer where the others said
    malformed. Now one verdict, one sentence, whichever columns are asked for."""
    run_dir = _run(scratch_runs)
    lines = (run_dir / rf.METRICS_CSV).read_text().splitlines()
    col = lines[0].split(",").index(rf.M.GRAD_NORM)
    row = lines[2].split(",")
    row[col] = "oops"
    lines[2] = ",".join(row)
    (run_dir / rf.METRICS_CSV).write_text("\n".join(lines) + "\n")
    (msg,) = _verdicts(run_dir)
    assert msg == (f"run {run_dir.name}: metrics.csv is malformed: line 3: 'oops' is not a number; the trainer "
                   f"writes only numbers, so the file was edited or damaged; delete the run or restore the file")


@pytest.mark.parametrize("case", ["one 200 MB line", "a 1 MB unfinished last row", "a column named twice"])
def test_an_over_long_line_or_a_doubled_column_is_named_for_what_it_is(scratch_runs: RealRuns, case: str) -> None:
    run_dir = _run(scratch_runs)
    path = run_dir / rf.METRICS_CSV
    if case == "one 200 MB line":
        with open(path, "wb") as f:
            f.write(b"iteration")
            f.truncate(200_000_000)  # sparse: no disk, and only the first 64 KB are read
        expected = "is malformed: its header (first line) runs on for more than 65,536 bytes without a line end in a file of 200.0 MB"
    elif case == "a 1 MB unfinished last row":
        with open(path, "ab") as f:
            f.write(b"1," * 500_000)
        expected = "is malformed: its last line runs on for 1.0 MB without a line end"
    else:
        text = path.read_text()
        path.write_text(text.replace(rf.M.GRAD_NORM, rf.M.ENTROPY, 1))
        expected = f"is malformed: its header names column {rf.M.ENTROPY!r} twice"
    (msg,) = _verdicts(run_dir)
    assert expected in msg and "empty" not in msg and "just starting" not in msg


def test_a_log_ending_in_one_huge_line_shows_its_end_and_says_so(scratch_runs: RealRuns) -> None:
    run_dir = _run(scratch_runs)
    with open(run_dir / rf.RUN_LOG, "wb") as f:
        f.truncate(200_000_000)  # sparse
        f.seek(0, os.SEEK_END)
        f.write(b"x" * 1000 + b" the end")
    tail = rs.tail_log(run_dir)
    assert "empty" not in tail.note
    assert "ends with one line longer than the 4 MiB scanned (the log is 200.0 MB)" in tail.note
    (line,) = tail.lines
    assert line.startswith("[...] ") and line.endswith(" the end") and len(line) <= 400


async def test_mcp_get_run_metrics_says_malformed_like_the_other_tools(scratch_runs: RealRuns) -> None:
    run_dir = _run(scratch_runs)
    (run_dir / rf.METRICS_CSV).write_text(_wide_csv(10_000))
    texts = set()
    async with Client(create_server(scratch_runs.runs_dir)) as client:
        for tool, extra in (("get_run_metrics", {}), ("get_run_metrics", {"catalog": True}), ("diagnose_run", {})):
            res = await client.call_tool(tool, {"run_id": run_dir.name, **extra})
            assert res.is_error, tool
            texts.add(" ".join(getattr(c, "text", "") for c in res.content).split(": ", 1)[1])
    (text,) = texts
    assert text.startswith(f"run {run_dir.name}: metrics.csv has 10,000 columns, more than the {MAX_METRIC_COLUMNS}")


# -- imports: never through a link, never quoting a refused file ---------------------------------
@pytest.fixture()
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.csv"
    path.parent.mkdir()
    path.write_text(f"{SECRET},time/total_timesteps\n1,2\n")
    return path


def _link_in(src: Path, name: str, target: Path) -> None:
    (src / name).unlink()
    os.symlink(target, src / name)


@pytest.mark.parametrize(("fixture", "name"), [
    ("sb3_log_ppo_cartpole", "progress.csv"),
    ("sb3_log_ppo_cartpole", "monitor.csv"),
    ("sb3_log_ppo_cartpole", "evaluations.npz"),
    ("rlzoo_dqn_cartpole", "0.monitor.csv"),
    ("rlzoo_dqn_cartpole", "CartPole-v1/config.yml"),
    ("rlzoo_dqn_cartpole", "CartPole-v1/args.yml"),
    ("cleanrl_ppo_cartpole", "events.out.tfevents.1795671973.vm.760.0"),
])
def test_import_refuses_a_linked_file_without_quoting_it(tmp_path: Path, secret: Path, fixture: str,
                                                        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / fixture, src)
    _link_in(src, name, secret)
    with pytest.raises(ImportError_) as got:
        import_runs([src], tmp_path / "runs", env_id="CartPole-v1")
    msg = str(got.value)
    assert f"{src / name} is a symbolic link, not a regular file, so it is not read" in msg
    assert SECRET not in msg and str(secret) not in msg
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    cli.main(["import", str(src), "--runs-dir", str(tmp_path / "runs"), "--env", "CartPole-v1"])
    out = capsys.readouterr()
    assert "symbolic link" in out.out + out.err and SECRET not in out.out + out.err


def test_the_search_for_runs_does_not_follow_a_linked_folder(tmp_path: Path) -> None:
    holder = tmp_path / "holder"
    holder.mkdir()
    os.symlink(FIXTURES / "sb3_log_ppo_cartpole", holder / "elsewhere")
    with pytest.raises(ImportError_, match="is none of the folders gsolve can import"):
        import_runs([holder], tmp_path / "runs")


async def test_mcp_import_refuses_a_linked_progress_csv_without_quoting_it(tmp_path: Path, secret: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "sb3_log_ppo_cartpole", src)
    _link_in(src, "progress.csv", secret)
    async with Client(create_server(tmp_path / "runs")) as client:
        res = await client.call_tool("import_runs", {"paths": [str(src)], "env_id": "CartPole-v1"})
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert res.is_error and "symbolic link" in text and SECRET not in text


def test_an_import_of_more_tags_than_a_run_holds_keeps_what_fits_and_says_so(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "sb3_log_ppo_cartpole", src)
    lines = (src / "progress.csv").read_text().splitlines()
    extra = 2 * MAX_METRIC_COLUMNS
    lines = [lines[0] + "".join(f",custom/t{j:04d}" for j in range(extra)),
             *(ln + ",1.5" * extra for ln in lines[1:])]
    (src / "progress.csv").write_text("\n".join(lines) + "\n")
    (got,) = import_runs([src], tmp_path / "runs", env_id="CartPole-v1").runs
    assert "beyond the 256 columns a run holds" in got.unknown["metrics left out"]
    run_dir = tmp_path / "runs" / got.run_id
    store = rs.RunStore(tmp_path / "runs")
    assert len(store.metric_columns(run_dir)) == MAX_METRIC_COLUMNS
    assert rs.available_metrics(store, run_dir).rows_total > 0
