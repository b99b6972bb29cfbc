"""The one way an import opens a file of the folder it imports: regular files only, never through a link.

A log folder from someone else may hold a symbolic link named ``progress.csv`` (or ``monitor.csv``,
``evaluations.npz``, ``config.yml``, an event file) that points at any file of this machine; reading
it would put that file's first line into an error message, that is into a terminal or an assistant's
context (issue 26). SB3, the RL Zoo, TensorBoard and CleanRL never write links, so every link is
refused before a byte is read, whatever it points at: with ``O_NOFOLLOW`` the refusal holds even if
the file is swapped for a link between the check and the open, which "only links that stay inside
the folder" could not promise. The folder the user names may itself be reached through links: they
chose it. Every operating-system error becomes a sentence naming the file (``errno`` only: the text
of an OSError may quote another path).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from gymnasium_solver.imports.source import ImportError_

# O_NONBLOCK: a FIFO planted under a log's name does not block the open (it is then refused).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# 512 MB: a 1M-step progress.csv or monitor.csv is ~100 MB.
MAX_SOURCE_FILE_BYTES = 512 * 1024 * 1024


def _not_read(path: Path, mode: int) -> ImportError_:
    kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device, socket or other special file")
    how = (" (a link may point at any file on this machine); copy the file it points to into its place "
           "(cp -L) to import it" if stat.S_ISLNK(mode) else "")
    return ImportError_(f"{path} is {kind}, not a regular file, so it is not read: an import reads only the "
                        f"files a trainer wrote in the folder it imports{how}")


def _os_error(path: Path, exc: OSError) -> ImportError_:
    if exc.errno is not None and os.strerror(exc.errno):
        return ImportError_(f"cannot read {path}: {os.strerror(exc.errno).lower()}")
    return ImportError_(f"cannot read {path}: {type(exc).__name__}")


def open_source_file(path: Path, max_bytes: int = MAX_SOURCE_FILE_BYTES) -> BinaryIO:
    """``path`` opened for reading in binary; ImportError_ if it is a link, not a regular file, larger
    than ``max_bytes`` or unreadable. Nothing of a refused file is read."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise _not_read(path, st.st_mode)
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1) or os.path.islink(path):  # swapped for a link since the lstat
            raise _not_read(path, stat.S_IFLNK) from None
        raise _os_error(path, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_read(path, st.st_mode)
        if st.st_size > max_bytes:
            raise ImportError_(f"{path} is {st.st_size / 1e6:.0f} MB, more than the {max_bytes / 1e6:.0f} MB an import "
                               f"reads of one file; import a run with smaller logs")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_source_file(path: Path, max_bytes: int = MAX_SOURCE_FILE_BYTES) -> bytes:
    """The bytes of one file of an import source (see :func:`open_source_file`), at most ``max_bytes``."""
    with open_source_file(path, max_bytes) as f:
        try:
            return f.read(max_bytes)
        except OSError as exc:
            raise _os_error(path, exc) from None


def is_real_folder(path: Path) -> bool:
    """A folder that is not reached through a link: the search for runs never follows one out."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
