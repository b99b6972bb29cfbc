"""Fault injection on the read side: every read-only MCP tool and every CLI read command, on run
folders damaged in every way issue 8 found, answers with a sentence or a result, never with an
empty error, a traceback, or a byte of a file outside the runs folder."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import files as files_mod
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio
MARKER = "OUTSIDE-MARKER-b7c1e9"
RUN_FILES = (rf.RUN_LOG, rf.METRICS_CSV, rf.RUN_JSON, rf.CONFIG_YAML)


def _link_out(name: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def apply(run: Path, _: pytest.MonkeyPatch) -> None:
        target = run.parent.parent / f"outside-{name}"
        target.write_text(f"root:x:0:0\n{MARKER}\n")
        (run / name).unlink()
        os.symlink(target, run / name)
    return apply


def _directory(run: Path, _: pytest.MonkeyPatch) -> None:
    (run / rf.METRICS_CSV).unlink()
    (run / rf.METRICS_CSV).mkdir()


def _os_error(code: int, where: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    """Simulate a file the process may not read (EACCES: root ignores chmod) or a full disk (ENOSPC)."""
    def apply(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_read = files_mod._os_open, files_mod._os_read
        bad: set[int] = set()

        def opener(path: Path, flags: int) -> int:
            if where == "open" and path.parent == run and path.name in (rf.METRICS_CSV, rf.CONFIG_YAML):
                raise OSError(code, os.strerror(code), str(path))
            fd = real_open(path, flags)
            if path.parent == run and path.name == rf.METRICS_CSV:
                bad.add(fd)
            return fd

        def reader(fd: int, n: int) -> bytes:
            if fd in bad:
                raise OSError(code, os.strerror(code), "/etc/passwd")
            return real_read(fd, n)

        monkeypatch.setattr(files_mod, "_os_open", opener)
        monkeypatch.setattr(files_mod, "_os_read", reader)
    return apply


def _rewrite(name: str, content: Callable[[bytes], bytes]) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def apply(run: Path, _: pytest.MonkeyPatch) -> None:
        (run / name).write_bytes(content((run / name).read_bytes()))
    return apply


def _empty_all(run: Path, _: pytest.MonkeyPatch) -> None:
    for name in RUN_FILES:
        (run / name).write_bytes(b"")


CORRUPTIONS: dict[str, Callable[[Path, pytest.MonkeyPatch], None]] = {
    **{f"symlink-{n}": _link_out(n) for n in RUN_FILES},
    "metrics-is-directory": _directory,
    "unreadable-metrics-and-config": _os_error(errno.EACCES, "open"),
    "disk-full-reading-metrics": _os_error(errno.ENOSPC, "read"),
    "truncated-run-json": _rewrite(rf.RUN_JSON, lambda b: b[: len(b) // 2]),
    "garbled-metrics": _rewrite(rf.METRICS_CSV, lambda b: b[: len(b) // 2] + b"\n\x00\xff,garbage;;\n" + b[len(b) // 2 :]),
    "truncated-metrics-mid-row": _rewrite(rf.METRICS_CSV, lambda b: b[: len(b) // 2]),
    "garbled-config": _rewrite(rf.CONFIG_YAML, lambda b: b"{[: not yaml\n\t" + b),
    "binary-run-log": _rewrite(rf.RUN_LOG, lambda b: b"\xff\xfe\x00" * 100),
    "all-files-empty": _empty_all,
}


def _args(schema: dict[str, Any], run_id: str, other: str) -> dict[str, Any] | None:
    props = schema.get("properties", {})
    args: dict[str, Any] = {}
    if "run_id" in props:
        args["run_id"] = run_id
    elif "run_ids" in props:
        args["run_ids"] = [run_id, other]
    elif set(schema.get("required", [])) - {"env_id"}:
        return None  # a read tool about something else (a preset, an experiment)
    elif "env_id" in props:
        args["env_id"] = "CartPole-v1"
    if "timeout_seconds" in props:
        args["timeout_seconds"] = 1
    return args


def _check(where: str, text: str, is_error: bool) -> None:
    assert MARKER not in text, f"{where} quoted the file outside the runs folder: {text[:300]}"
    assert "Traceback" not in text, f"{where} printed a traceback: {text[:300]}"
    if is_error:
        # The SDK prefixes a tool's own message with "Error executing tool NAME: "; the defect was
        # that nothing followed it.
        message = re.sub(r"^Error executing tool \w+:?", "", text.strip()).strip(" {}")
        assert len(message.split()) >= 5, f"{where} gave an empty error or no sentence: {text!r}"


@pytest.fixture()
def damaged(real_runs: RealRuns, tmp_path: Path) -> Callable[[str, pytest.MonkeyPatch], tuple[Path, str, str]]:
    def make(corruption: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
        runs = tmp_path / "runs"
        for run_id in (real_runs.short, real_runs.solved):
            shutil.copytree(real_runs.runs_dir / run_id, runs / run_id)
        CORRUPTIONS[corruption](runs / real_runs.short, monkeypatch)
        return runs, real_runs.short, real_runs.solved
    return make


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
async def test_read_tools_and_cli_on_a_damaged_run(
    corruption: str, damaged: Callable[[str, pytest.MonkeyPatch], tuple[Path, str, str]],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    runs, run_id, other = damaged(corruption, monkeypatch)
    called = 0
    async with Client(create_server(runs)) as client:
        for tool in (await client.list_tools()).tools:
            if tool.annotations is None or not tool.annotations.read_only_hint:
                continue
            args = _args(tool.input_schema, run_id, other)
            if args is None:
                continue
            res = await client.call_tool(tool.name, args)
            text = " ".join(getattr(c, "text", "") for c in res.content)
            _check(f"{tool.name}({args}) on {corruption}", text, bool(res.is_error))
            text += json.dumps(res.structured_content or {})
            _check(f"{tool.name}({args}) on {corruption}", text, False)
            called += 1
    assert called >= 12
    for argv in (["show", run_id], ["runs"], ["diagnose", run_id], ["compare", run_id, other]):
        code = cli.main([*argv, "--runs-dir", str(runs)])
        out = capsys.readouterr()
        _check(f"gsolve {' '.join(argv)} on {corruption}", out.out + out.err, code != 0)
        if code != 0:
            _check(f"gsolve {argv[0]} stderr", out.err, True)
