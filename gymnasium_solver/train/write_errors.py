"""A run-folder file the trainer could not write, as data: ``RunWriteError`` names the run, the file
and the failure kind run.json records (``disk_full``, ...), and ``writing`` turns an OSError into one.
Shared by the run writer and the checkpoints (neither imports the other for it)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Failure kinds (run.json failure.kind) of a run whose trainer could not write a file of its run
# folder, by errno, with what to do about it.
_WRITE_FAILURES: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("disk_full", "the disk is full; free space on the runs folder's disk"),
    errno.EDQUOT: ("disk_quota_exceeded", "the disk quota is exhausted; free space or raise the quota"),
    errno.EROFS: ("read_only_filesystem", "the file system is read-only; remount it read-write"),
    errno.EACCES: ("permission_denied", "check the owner and permissions of the run folder"),
    errno.EPERM: ("permission_denied", "check the owner and permissions of the run folder"),
    errno.EIO: ("io_error", "a failing disk or a network file system that went away; check the disk"),
}
WRITE_FAILURE_KINDS = frozenset({"write_error", *(kind for kind, _ in _WRITE_FAILURES.values())})


class RunWriteError(OSError):
    """The trainer could not write a file of its run folder. ``file`` names it inside the run folder;
    ``kind`` (``disk_full``, ``read_only_filesystem``, ...) is the failure kind recorded in run.json.
    The message names the run, the file and the OS error (never a path), and what to do."""

    def __init__(self, run_dir: Path, file: str, exc: OSError):
        code = exc.errno or 0
        kind, advice = _WRITE_FAILURES.get(code, ("write_error", "check the disk and the run folder's permissions"))
        what = f"{os.strerror(code)} ({errno.errorcode.get(code, '?')})" if code else type(exc).__name__
        super().__init__(code or None, f"writing {file} of run {run_dir.name} failed: {what}: {advice}")
        self.file, self.kind = file, kind

    def __str__(self) -> str:
        return str(self.strerror)


@contextmanager
def writing(run_dir: Path, file: str) -> Iterator[None]:
    """Turn an OSError raised while writing ``file`` (a name inside ``run_dir``) into a RunWriteError."""
    try:
        yield
    except RunWriteError:
        raise
    except OSError as exc:
        raise RunWriteError(run_dir, file, exc) from exc
