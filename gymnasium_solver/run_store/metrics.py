"""metrics.csv as numpy arrays, read by one parser (pyarrow's CSV reader), incrementally as it grows.

Only the columns asked for are converted (converting decimal text is most of a parse: one column of
a 300k-row file costs ~1/6 of all 25), and a file that grew since the last read is read only from
where the last read stopped; a torn last line (a row still being written) is left for the next read.
"""

from __future__ import annotations

import ctypes
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from gymnasium_solver import run_folder as rf
from gymnasium_solver.run_folder import MetricsTable
from gymnasium_solver.run_store.files import RunFileError, label, read_run_file

_MISSING = "the run has not written any metrics"
_DAMAGED = "the trainer writes only numbers, so the file was edited or damaged; delete the run or restore the file"


class MetricsArrays(NamedTuple):
    """metrics.csv as numpy: ``values[i, j]`` is row i, column j; ``missing`` marks empty fields.

    ``values`` holds NaN where a field was empty, so use ``missing`` to tell "not measured"
    apart from a real NaN that the trainer wrote as ``nan``.
    """

    columns: list[str]
    values: np.ndarray  # float64, shape (rows, columns), column-major: a column is contiguous
    missing: np.ndarray  # bool, same shape

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def col(self, name: str) -> int:
        return self.columns.index(name)


def _empty(ncols: int) -> tuple[np.ndarray, np.ndarray]:
    return np.empty((0, ncols), order="F"), np.empty((0, ncols), dtype=bool, order="F")


def _locate_bad_line(body: bytes, ncols: int, first_lineno: int) -> str:
    for offset, line in enumerate(body.decode("utf-8", errors="replace").splitlines()):
        parts = line.split(",")
        if len(parts) != ncols:
            return f"line {first_lineno + offset} has {len(parts)} fields, expected {ncols}"
        for p in parts:
            try:
                rf.parse_value(p)
            except ValueError:
                return f"line {first_lineno + offset}: {p[:40]!r} is not a number"
    return "rows could not be parsed as numbers"


def _give_back_memory() -> None:
    """Return freed parse buffers to the system: glibc keeps the CSV reader's freed blocks in its
    per-thread arenas, so without this the process only grows (issue 8: 1.4 GB after 5 runs)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def map_large_buffers() -> None:
    """Have glibc serve every allocation of 1 MB or more with its own mmap, so freeing it returns it.

    By default glibc raises its mmap threshold to the size of the largest block freed (up to 32 MB);
    after the first big parse, column-sized arrays come from the heap and, once freed, stay in the
    process. A long-lived reader (the MCP server) calls this once: 20 runs of 300k rows read at a
    160 MB cache cap left it at 374 MB RSS before, 309 MB after (issue 8). Process-wide; not glibc: no-op.
    """
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, 1 << 20)
    except (OSError, AttributeError):
        pass


def _fill_column(column: Any, values: np.ndarray, missing: np.ndarray) -> None:
    """Copy a float64 arrow column into ``values`` (NaN where empty) and ``missing``, straight from its
    buffers: arrow's own to_numpy imports pandas for a column with nulls, ~50 MB of the server's RSS."""
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        validity, data = chunk.buffers()
        values[at:at + n] = np.frombuffer(data, dtype=np.float64)[chunk.offset:chunk.offset + n]
        if validity is not None and chunk.null_count:
            bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            empty = bits[chunk.offset:chunk.offset + n] == 0
            missing[at:at + n] = empty
            values[at:at + n][empty] = np.nan
        at += n


def parse_rows(data: bytes, start: int, end: int, ncols: int, first_lineno: int, where: str,
               include: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(values, missing)`` of the complete rows in ``data[start:end]`` (which ends with a newline),
    for the columns ``include`` (indices, in file order; default all).

    Empty fields are missing (value NaN); 'nan'/'inf'/'-inf' parse as such. RunFileError naming
    the first malformed line (a row with the wrong number of fields, or a field of a converted
    column that is not a number).
    """
    cols = list(range(ncols)) if include is None else include
    rows = data.count(b"\n", start, end)
    if rows == 0:
        return _empty(len(cols))
    # No separate count of commas: arrow refuses a row with the wrong number of fields, and the
    # row count is checked after the parse (a 40 MB file: one scan less, ~20 ms).
    names = [f"c{j}" for j in range(ncols)]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(memoryview(data)[start:end]),  # no copy of a file that may be 100s of MB
            # 4 MB blocks: the default 1 MB blocks are ~2x slower on an in-memory buffer.
            read_options=pcsv.ReadOptions(column_names=names, block_size=4 << 20),
            parse_options=pcsv.ParseOptions(quote_char=False),
            # Only an empty field is "not measured"; 'nan' is a measured NaN, which arrow's
            # default null values would swallow.
            convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.float64()), null_values=[""],
                                                include_columns=[names[j] for j in cols]),
            # malloc'd buffers go back to the system when freed; arrow's own pool keeps them.
            memory_pool=pa.system_memory_pool(),
        )
    except (pa.ArrowInvalid, ValueError):
        table = None
    if table is None or table.num_rows != rows:
        detail = _locate_bad_line(data[start:end], ncols, first_lineno)
        raise RunFileError(f"{where} is malformed: {detail}; {_DAMAGED}")
    values, missing = np.empty((rows, len(cols)), order="F"), np.zeros((rows, len(cols)), dtype=bool, order="F")
    for k in range(len(cols)):
        _fill_column(table.column(k), values[:, k], missing[:, k])
    del table
    if end - start > 1 << 20:
        _give_back_memory()
    return values, missing


@dataclass(frozen=True)
class MetricsFile:
    """What has been read of one metrics.csv: the file's identity, how far, its header, and the
    parsed rows of the columns read so far (``arrays.columns``, a subset of ``columns`` in file order)."""

    ino: int
    size: int
    mtime_ns: int
    offset: int  # bytes consumed: the header and every complete row
    columns: list[str]  # the whole header
    arrays: MetricsArrays  # the columns converted so far

    @property
    def rows(self) -> int:
        return len(self.arrays)

    @property
    def nbytes(self) -> int:
        return int(self.arrays.values.nbytes + self.arrays.missing.nbytes) + 100 * len(self.columns) + 256

    def has(self, names: Collection[str] | None) -> bool:
        """Whether every column of ``names`` that the file has was converted (None: all of them)."""
        kept = set(self.arrays.columns)
        return all(c in kept for c in (self.columns if names is None else names) if c in self.columns)

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(values, missing)`` of one column; KeyError if the file has no such column (or it was
        not read: ask the store for it, which reads it)."""
        if name not in self.arrays.columns:
            raise KeyError(name)
        j = self.arrays.columns.index(name)
        return self.arrays.values[:, j], self.arrays.missing[:, j]

    def last_value(self, name: str) -> float | None:
        """The last measured value of a column (None if absent or never measured)."""
        if name not in self.arrays.columns:
            return None
        values, missing = self.column(name)
        present = np.flatnonzero(~missing)
        return float(values[present[-1]]) if present.shape[0] else None


def _stack(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    out = np.empty((old.shape[0] + new.shape[0], old.shape[1]), dtype=old.dtype, order="F")
    out[: old.shape[0]], out[old.shape[0] :] = old, new
    return out


def _header(run_dir: Path, data: bytes) -> tuple[list[str], int]:
    end = data.find(b"\n")
    if end < 0:
        return [], 0  # the header is not complete yet (the run just started): read it again next time
    where = label(run_dir, rf.METRICS_CSV)
    try:
        columns = data[:end].decode("utf-8").strip().split(",")
    except UnicodeDecodeError:
        raise RunFileError(f"{where} is malformed: its header is not UTF-8 text; {_DAMAGED}") from None
    if not columns or any(not c for c in columns):
        raise RunFileError(f"{where} is malformed: its header has an empty column name; {_DAMAGED}")
    return columns, end + 1


ALWAYS_READ = (rf.M.ITERATION, rf.M.ENV_STEPS)  # the row keys: every read converts them


def _wanted(columns: list[str], names: Collection[str] | None, previous: MetricsFile | None) -> list[int]:
    """Indices (file order) of the columns to convert: those asked for, those read before, the keys."""
    if names is None:
        return list(range(len(columns)))
    want = set(names) | set(ALWAYS_READ) | (set(previous.arrays.columns) if previous is not None else set())
    return [j for j, c in enumerate(columns) if c in want]


def read_metrics(run_dir: Path, previous: MetricsFile | None = None,
                 names: Collection[str] | None = None) -> MetricsFile:
    """metrics.csv of ``run_dir`` with at least the columns ``names`` converted (None: every column).

    Reads only what was appended since ``previous`` was read when ``previous`` already holds those
    columns; otherwise reads the file again, converting the union of both. RunFileError (a
    ValueError) if the file is missing, unreadable or malformed.
    """
    where = label(run_dir, rf.METRICS_CSV)
    if previous is not None and previous.columns and previous.has(names):
        got = read_run_file(run_dir, rf.METRICS_CSV, offset=previous.offset, missing=_MISSING)
        if got.ino == previous.ino and got.size >= previous.offset:
            if got.size == previous.size and got.mtime_ns == previous.mtime_ns:
                return previous
            end = got.data.rfind(b"\n") + 1  # a torn last line is left for the next read
            grown = replace(previous, size=got.size, mtime_ns=got.mtime_ns, offset=previous.offset + end)
            if not end:
                return grown
            old = previous.arrays
            include = [previous.columns.index(c) for c in old.columns]
            values, missing = parse_rows(got.data, 0, end, len(previous.columns), previous.rows + 2, where, include)
            return replace(grown, arrays=MetricsArrays(old.columns, _stack(old.values, values),
                                                       _stack(old.missing, missing)))
    got = read_run_file(run_dir, rf.METRICS_CSV, missing=_MISSING)
    columns, offset = _header(run_dir, got.data)
    end = offset
    same_file = previous is not None and previous.ino == got.ino and previous.columns == columns
    include = _wanted(columns, names, previous if same_file else None)
    if columns:
        end = max(got.data.rfind(b"\n") + 1, offset)
        values, missing = parse_rows(got.data, offset, end, len(columns), 2, where, include)
    else:
        values, missing = _empty(0)
    kept = [columns[j] for j in include]
    return MetricsFile(got.ino, got.size, got.mtime_ns, end, columns, MetricsArrays(kept, values, missing))


def as_table(arrays: MetricsArrays) -> MetricsTable:
    """The arrays as a :class:`MetricsTable` (None = not measured): one Python float per cell."""
    rows = arrays.values.tolist()
    for i, j in zip(*np.nonzero(arrays.missing), strict=True):
        rows[i][j] = None
    return MetricsTable(list(arrays.columns), rows)
