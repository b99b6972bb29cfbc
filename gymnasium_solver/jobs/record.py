"""What every job record shares: its status vocabulary, id lookup, atomic write and crash detection.

A job (a fix experiment, a sweep) keeps one JSON record under a hidden folder of the runs folder
(``.experiments/``, ``.sweeps/``), rewritten atomically by its coordinator on every change and as a
heartbeat (jobs.pool). Readers call :func:`read_json_record`, which resolves an id or unique prefix
with close matches for a typo, and :func:`coordinator_gone`, which tells a dead coordinator from a
live one, so a record never says "running" for a job nobody runs.
"""

from __future__ import annotations

import difflib
import re
import socket
import time
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.pool import STALE_SECONDS

JobStatus = Literal["running", "done", "failed", "crashed"]
M = TypeVar("M", bound=BaseModel)


class JobKind(BaseModel):
    """Where one kind of job keeps its records, and how its ids look."""

    noun: str  # "experiment", "sweep"
    folder: str  # ".experiments"
    pattern: str  # the id regex
    example: str  # an id, for the error message
    start_hint: str  # how to start one, for an empty folder

    def path(self, runs_dir: Path, job_id: str) -> Path:
        if not re.match(self.pattern, job_id):
            raise ValueError(f"{job_id!r} is not a{'n' if self.noun[0] in 'aeiou' else ''} {self.noun} id; they "
                             f"look like {self.example} ({self.start_hint} print them)")
        return Path(runs_dir) / self.folder / f"{job_id}.json"

    def list_ids(self, runs_dir: Path) -> list[str]:
        """The ids in the runs folder, oldest first."""
        folder = Path(runs_dir) / self.folder
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.json") if re.match(self.pattern, p.stem))

    def resolve(self, runs_dir: Path, job_id: str) -> str:
        """An exact id or a unique prefix -> the id; ValueError naming close matches otherwise."""
        ids = self.list_ids(runs_dir)
        job_id = job_id.strip()
        matches = [i for i in ids if i == job_id] or [i for i in ids if job_id and i.startswith(job_id)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise ValueError(f"{self.noun} prefix {job_id!r} is ambiguous: {', '.join(matches[-5:])}")
        close = difflib.get_close_matches(job_id, ids, n=3, cutoff=0.6)
        hint = (f"; did you mean {', '.join(close)}?" if close
                else f"; newest: {ids[-1]}" if ids else f"; none have been started here ({self.start_hint})")
        raise ValueError(f"no {self.noun} {job_id!r} in {Path(runs_dir) / self.folder}{hint}")

    def write(self, runs_dir: Path, job_id: str, record: BaseModel) -> None:
        rf.atomic_write_text(self.path(runs_dir, job_id), record.model_dump_json(indent=2), durable=False)

    def read(self, runs_dir: Path, job_id: str, model: type[M]) -> M:
        """The record of ``job_id`` (or a unique prefix) as ``model``; ValueError (a sentence) otherwise."""
        path = self.path(runs_dir, self.resolve(runs_dir, job_id))
        try:
            return model.model_validate_json(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise ValueError(f"{path} is malformed: {exc}") from None


def process_exited(pid: int | None, host: str | None) -> bool:
    """Whether a job's process is known to have exited: its pid is dead here (a process on another host, or
    none recorded, cannot be told)."""
    return pid is not None and host == socket.gethostname() and not rf.pid_alive(pid)


def coordinator_gone(status: str, pid: int | None, host: str | None, updated_at: str) -> str | None:
    """Why a 'running' job's coordinator is gone (its pid is dead here, or its record went silent for
    longer than STALE_SECONDS), or None while it is alive (or the job is not running)."""
    if status != "running":
        return None
    if process_exited(pid, host):
        return "its coordinator process exited"
    try:
        if time.time() - rf.parse_iso(updated_at) > STALE_SECONDS:
            return f"no update for over {STALE_SECONDS:g}s"
    except ValueError:
        pass
    return None


_LOG_TAIL_BYTES = 4096


def log_note(runs_dir: Path, folder: str, name: str) -> str:
    """' (its log: FOLDER/NAME in the runs folder, which ends: "...")' for a job whose coordinator died, or '' without
    a readable log (a foreground job's output went to its terminal)."""
    from gymnasium_solver.run_store.files import read_run_file

    try:
        tail = read_run_file(Path(runs_dir) / folder, name, last=_LOG_TAIL_BYTES).data.decode("utf-8", "replace")
    except ValueError:  # missing or unreadable: the record alone says it died
        return ""
    last = next((ln.strip() for ln in reversed(tail.splitlines()) if ln.strip()), "")
    ends = f", which ends: {last[:300]!r}" if last else ""
    return f" (its log: {folder}/{name} in the runs folder{ends})"

