"""Fault injection on the write side: training on a disk that refuses writes, and every CLI command
and MCP tool that writes or loads (train, eval, retry, fix, train --resume; start_training,
stop_training, start_training(resume=...), fix_run, get_fix) on damaged inputs. Each ends with a
sentence: no traceback, no hang, no byte read from or written to a file outside the runs folder."""

from __future__ import annotations

import errno
import os
import pathlib
import re
import shutil
import signal
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import torch
from mcp import Client

from gymnasium_solver import config
from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.train import checkpoints, training
from gymnasium_solver.train.run_writer import RunWriter
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

MARKER = "OUTSIDE-MARKER-5d0e2a"
TINY = ["n_envs=4", "n_steps=64", "batch_size=64", "eval_freq=512", "eval_episodes=2", "max_env_steps=2048",
        "last_checkpoint_seconds=0"]


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """A hang detector only: fail the test if the block runs longer than ``seconds``."""
    def expired(signum: int, frame: Any) -> None:
        raise AssertionError(f"hung for more than {seconds}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_sentence(where: str, text: str) -> None:
    """An error that is one sentence: no traceback, no byte of an outside file, more than a word."""
    assert MARKER not in text, f"{where} quoted a file outside the runs folder: {text[:400]}"
    assert "Traceback" not in text, f"{where} printed a traceback: {text[:400]}"
    message = re.sub(r"^(Error executing tool \w+:?|gsolve \w+: error:)", "", text.strip()).strip()
    assert len(message.split()) >= 6, f"{where} gave an empty error or no sentence: {text!r}"


# ---------------------------------------------------------------------------------------------
# 1. A disk that refuses writes while training: a structured failure, no data lost.
class _Refusing:
    """A file object whose writes fail with ``code`` once ``allowed`` writes have gone through."""

    def __init__(self, f: Any, allowed: int, code: int):
        self._f, self._left, self._code = f, allowed, code

    def write(self, data: str) -> int:
        if self._left <= 0:
            raise OSError(self._code, os.strerror(self._code))
        self._left -= 1
        return int(self._f.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def _refuse_file(attr: str, allowed: int, code: int) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        init = RunWriter.__init__

        def patched(self: RunWriter, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            if attr == "metrics":
                self.metrics._file = _Refusing(self.metrics._file, allowed, code)  # type: ignore[assignment]
            else:
                self._log = _Refusing(self._log, allowed, code)  # type: ignore[assignment]
        monkeypatch.setattr(RunWriter, "__init__", patched)
    return apply


def _refuse_run_json(allowed: int, code: int) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        real, left = rf.atomic_write_text, [allowed]

        def atomic(path: Path, text: str, durable: bool = True) -> None:
            if path.name == rf.RUN_JSON:
                if left[0] <= 0:
                    raise OSError(code, os.strerror(code), str(path))
                left[0] -= 1
            real(path, text, durable)
        monkeypatch.setattr(rf, "atomic_write_text", atomic)
    return apply


def _refuse_checkpoints(code: int) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        def mkstemp(**kwargs: Any) -> tuple[int, str]:
            raise OSError(code, os.strerror(code), str(kwargs.get("dir")))
        monkeypatch.setattr(checkpoints, "tempfile", types.SimpleNamespace(mkstemp=mkstemp))
    return apply


# (file the disk refuses, failure kind recorded, how): metrics.csv after 3 rows; run.log after its
# first lines; every checkpoint; run.json after 4 writes (the failure cannot be recorded there).
DISK_FAULTS = {
    "metrics.csv": ("disk_full", _refuse_file("metrics", 3, errno.ENOSPC)),
    "run.log": ("read_only_filesystem", _refuse_file("log", 2, errno.EROFS)),
    "checkpoints/last.pt": ("disk_quota_exceeded", _refuse_checkpoints(errno.EDQUOT)),
    "run.json": ("permission_denied", _refuse_run_json(4, errno.EACCES)),
}


@pytest.mark.parametrize("file", sorted(DISK_FAULTS))
def test_a_disk_refusing_writes_is_recorded_as_such(file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    kind, inject = DISK_FAULTS[file]
    inject(monkeypatch)
    with deadline(60):
        result = training.train(config.resolve_config("CartPole-v1:ppo", TINY), tmp_path)
    assert result.status == rf.RunStatus.FAILED and result.stop_reason == rf.StopReason.ERROR
    assert result.failure is not None and result.failure.kind == kind
    assert f"writing {file} of run {result.run_id} failed" in result.failure.message
    # The advice works (issue 26): --resume only when a checkpoint exists for it to take.
    resumable = any(m.name == rf.LAST_CHECKPOINT for m in rf.read_checkpoint_metas(result.run_dir))
    if resumable:
        assert f"gsolve train --resume {result.run_id}" in result.failure.message
    else:
        assert "--resume" not in result.failure.message
        assert "start it again with `gsolve train CartPole-v1:ppo" in result.failure.message
    monkeypatch.undo()
    # No row already written is lost: the header, then complete rows 1..n.
    table = rf.parse_metrics_text((result.run_dir / rf.METRICS_CSV).read_text())
    assert [int(r[0] or 0) for r in table.rows] == list(range(1, len(table) + 1))
    assert len(table) == 3 if file == rf.METRICS_CSV else len(table) >= 1
    info = RunStore(tmp_path).info(result.run_dir)
    if file == rf.RUN_JSON:
        # run.json could not take the failure: the result and stderr say so, readers see a trainer gone.
        assert "run.json could not record this failure" in result.failure.message
        assert "could not record" in capsys.readouterr().err
        assert info.status == rf.RunStatus.RUNNING
        assert rf.effective_status(info, now=rf.parse_iso(info.updated_at) + 3600) == rf.RunStatus.CRASHED
        return
    assert (info.status, info.failure and info.failure.kind) == (rf.RunStatus.FAILED, kind)
    assert cli.main(["show", result.run_id, "--runs-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert f"failure     {kind}: writing {file}" in shown and "Traceback" not in shown


@pytest.mark.parametrize("full", ["metrics.csv", "checkpoints"])
def test_a_full_disk_advises_a_resume_only_when_there_is_a_checkpoint(full: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: the disk-full advice pointed to --resume when no checkpoint was ever written. A disk
    that fills after the checkpoints advises the resume; one that refuses every checkpoint, a new start."""
    inject = _refuse_file("metrics", 3, errno.ENOSPC) if full == "metrics.csv" else _refuse_checkpoints(errno.ENOSPC)
    inject(monkeypatch)
    with deadline(60):
        result = training.train(config.resolve_config("CartPole-v1:ppo", TINY), tmp_path, overrides={"seed": 3})
    assert result.failure is not None and result.failure.kind == "disk_full"
    message = result.failure.message
    assert "the disk is full; free space on the runs folder's disk, then " in message
    if full == "metrics.csv":
        assert f"continue the run with `gsolve train --resume {result.run_id}` (from its checkpoint last" in message
    else:
        assert "--resume" not in message and not rf.read_checkpoint_metas(result.run_dir)
        assert message.endswith("start it again with `gsolve train CartPole-v1:ppo --set seed=3`: it has no "
                                "checkpoint to resume from")


# ---------------------------------------------------------------------------------------------
# 2. CLI commands and MCP tools that write or load, on damaged inputs.
ORIGINALS: dict[Path, str] = {}  # every outside target and what it held


def _outside(runs: Path, name: str, text: str = "") -> Path:
    target = runs.parent / f"outside-{name.replace('/', '-')}"
    target.write_text(text or f"root:x:0:0\n{MARKER}\n")
    ORIGINALS[target] = target.read_text()
    return target


def _link_out(name: str, text: str = "") -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        target = _outside(run.parent, name, text)
        (run / name).unlink()
        os.symlink(target, run / name)
    return apply


def _rewrite(name: str, content: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        (run / name).write_bytes(content((run / name).read_bytes()))
    return apply


def _directory(name: str) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        (run / name).unlink()
        (run / name).mkdir()
    return apply


def _foreign_checkpoint(run: Path) -> None:
    """best.pt of the REINFORCE run copied into the PPO run."""
    other = next(p for p in run.parent.iterdir() if p != run and p.is_dir()
                 and rf.read_run_info(p).algo != rf.read_run_info(run).algo)
    shutil.copy(other / "checkpoints/best.pt", run / "checkpoints/best.pt")


def _wrong_shape(run: Path) -> None:
    """best.pt whose config is the run's but whose first layer has another width."""
    path = run / "checkpoints/best.pt"
    payload = torch.load(path, weights_only=True)
    payload["model"] = {k: v[..., :1] if v.ndim == 2 else v for k, v in payload["model"].items()}
    torch.save(payload, path)


def _running_crashed(run: Path) -> None:
    """The run marked crashed-and-resumable: stopped, with its last.pt (resume's input) linked out."""
    info = rf.read_run_info(run)
    rf.write_run_info(run, info.model_copy(update={"status": rf.RunStatus.STOPPED, "solved": False}))
    _link_out("checkpoints/last.pt")(run)


def _stopped(run: Path) -> None:
    info = rf.read_run_info(run)
    rf.write_run_info(run, info.model_copy(update={"status": rf.RunStatus.STOPPED, "stop_reason": rf.StopReason.USER_STOPPED}))


def _then(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        for step in steps:
            step(run)
    return apply


def _run_folder_link(run: Path) -> None:
    """The whole run folder is a link to a copy outside the runs folder."""
    outside = run.parent.parent / "outside-run"
    shutil.move(str(run), outside)
    (outside / rf.RUN_LOG).write_text(MARKER + "\n")
    ORIGINALS[outside / rf.RUN_LOG] = MARKER + "\n"
    os.symlink(outside, run)


EVAL_DAMAGE = {
    "truncated": _rewrite("checkpoints/best.pt", lambda b: b[: len(b) // 3]),
    "garbage": _rewrite("checkpoints/best.pt", lambda b: os.urandom(len(b))),
    "empty": _rewrite("checkpoints/best.pt", lambda b: b""),
    "directory": _directory("checkpoints/best.pt"),
    "symlink-out": _link_out("checkpoints/best.pt"),
    "other-algorithm": _foreign_checkpoint,
    "wrong-shape": _wrong_shape,
}
RUN_DAMAGE = {
    "run.json-symlink": _then(_stopped, _link_out(rf.RUN_JSON)),
    "run.log-symlink": _then(_stopped, _link_out(rf.RUN_LOG)),
    "metrics-symlink": _then(_stopped, _link_out(rf.METRICS_CSV)),
    "config-garbage": _then(_stopped, _rewrite(rf.CONFIG_YAML, lambda b: b"{[: not yaml\n\t" + b)),
    "last.pt-symlink": _running_crashed,
    "run-folder-symlink": _then(_stopped, _run_folder_link),
}
CLI_CASES: list[tuple[str, Callable[[Path], None], Callable[[str, Path], list[str]]]] = [
    *((f"eval-{k}", f, lambda r, d: ["eval", r, "--episodes", "2", "--runs-dir", str(d)]) for k, f in EVAL_DAMAGE.items()),
    *((f"resume-{k}", f, lambda r, d: ["train", "--resume", r, "--quiet", "--runs-dir", str(d)])
      for k, f in RUN_DAMAGE.items()),
    *((f"retry-{k}", f, lambda r, d: ["retry", r, "--dry-run", "--set", "max_env_steps=512", "--runs-dir", str(d)])
      for k, f in RUN_DAMAGE.items() if k != "last.pt-symlink"),
    *((f"fix-{k}", f, lambda r, d: ["fix", r, "--max-trials", "1", "--timeout", "20", "--runs-dir", str(d)])
      for k, f in RUN_DAMAGE.items() if k in ("run.json-symlink", "config-garbage", "run-folder-symlink")),
]


@pytest.fixture()
def runs(real_runs: RealRuns, tmp_path: Path) -> Path:
    """A copy of the short PPO run and the REINFORCE run (tmp_path/runs); outside targets go in tmp_path."""
    out = tmp_path / "runs"
    for run_id in (real_runs.short, real_runs.reinforce):
        shutil.copytree(real_runs.runs_dir / run_id, out / run_id)
    return out


def _outside_untouched(runs: Path) -> None:
    for p, text in ORIGINALS.items():
        if p.is_relative_to(runs.parent):
            assert p.read_text() == text, f"{p.name}, outside the runs folder, was written to"


@pytest.mark.parametrize("case", [c[0] for c in CLI_CASES])
def test_cli_commands_on_damaged_inputs(case: str, runs: Path, real_runs: RealRuns,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _, damage, argv = next(c for c in CLI_CASES if c[0] == case)
    damage(runs / real_runs.short)
    with deadline(45):
        code = cli.main(argv(real_runs.short, runs))
    out = capsys.readouterr()
    # A dry-run retry needs only run.json and config.yaml: with its run.log linked out it may plan.
    assert code == 2 or (case == "retry-run.log-symlink" and code == 0), f"gsolve {case} exited {code}: {out.err[-300:]}"
    if code:
        check_sentence(f"gsolve {case}", out.err)
    assert MARKER not in out.out
    _outside_untouched(runs)


def _read_only(monkeypatch: pytest.MonkeyPatch, runs: Path) -> None:
    """A read-only runs folder (root ignores chmod, so the file system's answer is injected)."""
    real = pathlib.Path.mkdir

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if self == runs or self.parent == runs:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        real(self, *args, **kwargs)
    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)


@pytest.mark.parametrize("runs_dir", ["read-only", "a-file"])
def test_cli_train_into_an_unwritable_runs_folder(runs_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "runs"
    if runs_dir == "a-file":
        target.write_text(f"{MARKER}\n")
    else:
        _read_only(monkeypatch, target)
    with deadline(30):
        code = cli.main(["train", "CartPole-v1:ppo", "--quiet", "--runs-dir", str(target), "--set", *TINY])
    out = capsys.readouterr()
    assert code == 2
    check_sentence(f"gsolve train into a {runs_dir} runs folder", out.err)
    assert "--runs-dir" in out.err
    if runs_dir == "a-file":
        assert target.read_text() == f"{MARKER}\n"


def _read_only_writes(monkeypatch: pytest.MonkeyPatch, runs: Path) -> None:
    """Every atomic write into the runs folder refused as on a read-only file system."""
    def atomic(path: Path, text: str, durable: bool = True) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    monkeypatch.setattr(rf, "atomic_write_text", atomic)


def _garbage_experiment(runs: Path, how: str) -> None:
    folder = runs / "experiments"
    folder.mkdir(exist_ok=True)
    record = folder / "fix-20260101-000000-abcd.json"
    if how == "garbage":
        record.write_bytes(b"\x00\xff{" + MARKER.encode() + b"\n")
    elif how == "symlink":
        os.symlink(_outside(runs, "experiment.json", '{"experiment_id": "' + MARKER + '"}'), record)
    else:
        record.mkdir()


MCP_CASES: list[tuple[str, str, Callable[[Path, str, pytest.MonkeyPatch], dict[str, Any]]]] = [
    ("start_training-read-only", "start_training",
     lambda d, r, mp: (_read_only(mp, d), {"config_id": "CartPole-v1:ppo", "overrides": {"max_env_steps": 512}})[1]),
    ("stop_training-run.json-symlink", "stop_training",
     lambda d, r, mp: (_link_out(rf.RUN_JSON)(d / r), {"run_id": r, "timeout_seconds": 1})[1]),
    ("resume-run.json-symlink", "start_training",
     lambda d, r, mp: (_link_out(rf.RUN_JSON)(d / r), {"resume": r})[1]),
    ("resume-run.log-symlink", "start_training",
     lambda d, r, mp: (_then(_stopped, _link_out(rf.RUN_LOG))(d / r), {"resume": r})[1]),
    ("resume-last.pt-symlink", "start_training",
     lambda d, r, mp: (_running_crashed(d / r), {"resume": r})[1]),
    ("fix_run-run.json-symlink", "fix_run",
     lambda d, r, mp: (_link_out(rf.RUN_JSON)(d / r), {"run_id": r, "max_trials": 1})[1]),
    ("fix_run-read-only", "fix_run",
     lambda d, r, mp: (_read_only_writes(mp, d), {"run_id": r, "max_trials": 1})[1]),
    *((f"get_fix-{how}", "get_fix",
       lambda d, r, mp, how=how: (_garbage_experiment(d, how), {"experiment_id": "fix-2026"})[1])
      for how in ("garbage", "symlink", "directory")),
]


@pytest.mark.anyio
@pytest.mark.parametrize("case", [c[0] for c in MCP_CASES])
async def test_mcp_tools_on_damaged_inputs(case: str, runs: Path, real_runs: RealRuns,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _, name, setup = next(c for c in MCP_CASES if c[0] == case)
    args = setup(runs, real_runs.short, monkeypatch)
    with deadline(30):
        async with Client(create_server(runs)) as client:
            res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert res.is_error, f"{case} did not fail: {text[:300]}"
    check_sentence(f"{name} on {case}", text)
    _outside_untouched(runs)


def test_run_json_is_written_by_run_writer_only(runs: Path, real_runs: RealRuns) -> None:
    """The launcher and the experiment runner record a forced stop through run_writer (issue 8)."""
    from gymnasium_solver.train import run_writer

    root = Path(__file__).resolve().parent.parent
    writers = [p.relative_to(root).as_posix() for d in ("gymnasium_solver", "mcp_server") for p in (root / d).rglob("*.py")
               if "write_run_info" in p.read_text() and p.name not in ("run_folder.py", "run_writer.py")]
    assert writers == []
    run = runs / real_runs.short
    info = run_writer.record_forced_stop(run, RunStore(runs).info(run), "exited on SIGTERM without recording its stop")
    again = rf.read_run_info(run)
    assert again == info and (again.status, again.failure and again.failure.kind) == (rf.RunStatus.STOPPED, "forced_stop")
