"""The one function through which the read side reads a file in a run folder.

It reads regular files only: a symbolic link, a directory or a FIFO in place of a run file is
refused before a byte of it is read, and every operating-system error becomes a
:class:`RunFileError` whose sentence names the run and the file (never a path outside the runs
folder) and says what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import NamedTuple

# O_NOFOLLOW closes the race between the lstat check and the open; O_NONBLOCK keeps a FIFO
# planted in a run folder from blocking the open (it is then refused as not a regular file).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_BLOCK = 16 << 20


class RunFileError(ValueError):
    """A file in a run folder is missing, unreadable or malformed; the message says which and what to do."""


class FileRead(NamedTuple):
    """Bytes read from a run file and the identity of the file they came from."""

    data: bytes
    offset: int  # where ``data`` starts in the file
    size: int
    ino: int
    mtime_ns: int


def label(run_dir: Path, name: str) -> str:
    """How messages name a run file: the run id and the file's name inside the run folder."""
    return f"run {run_dir.name}: {name}"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or other special file"


def _refused(run_dir: Path, name: str, mode: int) -> RunFileError:
    return RunFileError(
        f"{label(run_dir, name)} is {_kind(mode)}, not a regular file, so it is not read (the run store reads "
        f"only files the trainer wrote inside the run folder); replace it with the file itself or remove it"
    )


_ERRNO_SENTENCES = {
    errno.EACCES: "permission denied; give the user running gsolve read access to it (e.g. chmod u+r)",
    errno.EPERM: "the operation is not permitted; check the file's permissions and ownership",
    errno.ENOSPC: "the disk is full (no space left on device); free some space and try again",
    errno.EROFS: "the file system is read-only; remount it read-write or copy the runs folder elsewhere",
    errno.EIO: "an input/output error (a failing disk or a network file system that went away); check the disk",
    errno.EMFILE: "too many files are open in this process; retry, or raise the open-file limit (ulimit -n)",
    errno.ENFILE: "too many files are open on the system; retry shortly",
    errno.ENOMEM: "the system is out of memory; free some memory and try again",
    errno.ENOTDIR: "part of its path is not a folder; the run folder is damaged",
    errno.ENAMETOOLONG: "its path is too long for the file system",
    errno.ESTALE: "the network file handle is stale; retry",
}


def os_error(run_dir: Path, name: str, exc: OSError, missing: str = "") -> RunFileError:
    """One sentence for an OSError on a run file. Only ``exc.errno`` is used: its text may hold a path."""
    code = exc.errno
    if code == errno.ENOENT:
        return RunFileError(f"{label(run_dir, name)} is missing" + (f": {missing}" if missing else ""))
    if code == errno.ELOOP:
        return _refused(run_dir, name, stat.S_IFLNK)
    if code == errno.EISDIR:
        return _refused(run_dir, name, stat.S_IFDIR)
    why = _ERRNO_SENTENCES.get(code or -1)
    if why is None:
        what = os.strerror(code) if code else type(exc).__name__
        why = f"{what} ({errno.errorcode.get(code or -1, 'no errno')}); check the disk and the file's permissions"
    return RunFileError(f"{label(run_dir, name)} cannot be read: {why}")


def _os_open(path: Path, flags: int) -> int:
    """os.open, kept apart so that tests can inject disk errors."""
    return os.open(path, flags)


def _os_read(fd: int, n: int) -> bytes:
    """os.read, kept apart so that tests can inject disk errors."""
    return os.read(fd, n)


def lstat_run_file(run_dir: Path, name: str, missing: str = "") -> os.stat_result:
    """The lstat of a run file after checking that every folder on its way is a real folder.

    RunFileError if it is missing, is not a regular file, or cannot be looked at.
    """
    parts = name.split("/")
    here = run_dir
    try:
        for i, part in enumerate(parts[:-1]):
            here = here / part
            st = os.lstat(here)
            if not stat.S_ISDIR(st.st_mode):
                raise _refused(run_dir, "/".join(parts[: i + 1]), st.st_mode)
        st = os.lstat(run_dir / name)
    except OSError as exc:
        raise os_error(run_dir, name, exc, missing) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refused(run_dir, name, st.st_mode)
    return st


def regular_file_size(run_dir: Path, name: str) -> int | None:
    """Size of a run file that is a regular file, None if it is absent; RunFileError otherwise."""
    try:
        return lstat_run_file(run_dir, name).st_size
    except RunFileError:
        if not os.path.lexists(run_dir / name):
            return None
        raise


def read_run_file(run_dir: Path, name: str, *, offset: int = 0, last: int | None = None,
                  limit: int | None = None, missing: str = "") -> FileRead:
    """Bytes of the regular file ``name`` (e.g. ``metrics.csv``, ``checkpoints/best.json``) in ``run_dir``.

    From ``offset`` to the end (at most ``limit`` bytes), or only the ``last`` bytes. Raises :class:`RunFileError` (a
    ValueError) for anything that is not a readable regular file; ``missing`` is added to the
    sentence when the file does not exist.
    """
    lstat_run_file(run_dir, name, missing)
    try:
        fd = _os_open(run_dir / name, _OPEN_FLAGS)
    except OSError as exc:
        raise os_error(run_dir, name, exc, missing) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else since the lstat
            raise _refused(run_dir, name, st.st_mode)
        start = max(st.st_size - last, 0) if last is not None else min(offset, st.st_size)
        os.lseek(fd, start, os.SEEK_SET)
        blocks = []
        want = _READ_BLOCK if limit is None else min(limit, _READ_BLOCK)
        while want and (block := _os_read(fd, want)):
            blocks.append(block)
            if limit is not None:
                limit -= len(block)
                want = min(limit, _READ_BLOCK)
        data = blocks[0] if len(blocks) == 1 else b"".join(blocks)
    except OSError as exc:
        raise os_error(run_dir, name, exc, missing) from None
    finally:
        os.close(fd)
    return FileRead(data, start, st.st_size, st.st_ino, st.st_mtime_ns)


def read_run_text(run_dir: Path, name: str, missing: str = "") -> str:
    """A whole run file as UTF-8 text; RunFileError if it is unreadable or not UTF-8."""
    data = read_run_file(run_dir, name, missing=missing).data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(f"{label(run_dir, name)} is malformed: byte {exc.start} is not UTF-8 text; "
                           f"the file is damaged (restore it or delete the run)") from None
