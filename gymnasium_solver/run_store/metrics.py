"""metrics.csv as numpy arrays, read by one parser (pyarrow's CSV reader), incrementally as it grows.

Only the columns asked for are converted (converting decimal text is most of a parse: one column of
a 300k-row file costs ~1/6 of all 25), and a file that grew since the last read is read only from
where the last read stopped; a torn last line (a row still being written) is left for the next read.
"""

from __future__ import annotations

import ctypes
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import MetricsTable
from gymnasium_solver.run_store.files import FileRead, RunFileError, label, read_run_file
from gymnasium_solver.run_store.limits import MAX_METRIC_COLUMNS, MAX_METRICS_LINE_BYTES

_MISSING = "the run has not written any metrics"
_EDITED = "the file was edited or damaged; delete the run or restore the file"
_DAMAGED = f"the trainer writes only numbers, so {_EDITED}"


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
    per-thread arenas, so without this the process only grows (measured: 1.4 GB after reading 5 runs)."""
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
    160 MB cache cap left it at 374 MB RSS before, 309 MB after (docs/benchmarks-run-store.md, Memory).
    Process-wide; not glibc: no-op.
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


# Bytes a number the trainer writes can hold ('nan', 'inf', '-1.5e-05'), a comma and line ends.
_NUMBER_BYTES = b"0123456789.eE+-naifNAIF,\r\n"
_SCAN_BLOCK = 256 << 10  # blocks that stay in cache: 16 MB blocks were ~2x slower


def _only_number_bytes(data: bytes, start: int, end: int) -> bool:
    """Whether ``data[start:end]`` holds only bytes of numbers: one C-speed pass (~0.3 s per 500 MB), in blocks."""
    return not any(data[i:min(i + _SCAN_BLOCK, end)].translate(None, _NUMBER_BYTES)
                   for i in range(start, end, _SCAN_BLOCK))


def parse_rows(data: bytes, start: int, end: int, ncols: int, first_lineno: int, where: str,
               include: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(values, missing)`` of the complete rows in ``data[start:end]`` (which ends with a newline),
    for the columns ``include`` (indices, in file order; default all).

    Empty fields are missing (value NaN); 'nan'/'inf'/'-inf' parse as such. RunFileError naming
    the first malformed line (a row with the wrong number of fields, or a field that is not a
    number). Whichever columns are asked for, the verdict on the file is the same (issue 26:
    get_run_metrics answered where get_run_metrics(catalog=true) said malformed): columns that are not
    converted are checked to hold only bytes of numbers, and if they do not, every column is
    converted, so that the same line is named in the same sentence.
    """
    if include is not None and len(include) < ncols and not _only_number_bytes(data, start, end):
        values, missing = parse_rows(data, start, end, ncols, first_lineno, where)
        return values[:, include], missing[:, include]  # reached only by a file some tool would refuse
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
    # name -> index in ``arrays``: a lookup per column asked must not scan the header (issue 26: with
    # 10k columns, listing them cost 10 s of CPU, quadratic in the number of columns).
    converted: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "converted", {c: j for j, c in enumerate(self.arrays.columns)})

    @property
    def rows(self) -> int:
        return len(self.arrays)

    @property
    def nbytes(self) -> int:
        return int(self.arrays.values.nbytes + self.arrays.missing.nbytes) + 100 * len(self.columns) + 256

    def has(self, names: Collection[str] | None) -> bool:
        """Whether every column of ``names`` that the file has was converted (None: all of them)."""
        if names is None:
            return len(self.converted) == len(self.columns)
        header = set(self.columns) if len(names) > 8 else self.columns  # a few names: no set to build
        return all(c in self.converted for c in names if c in header)

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(values, missing)`` of one column; KeyError if the file has no such column (or it was
        not read: ask the store for it, which reads it)."""
        j = self.converted[name]  # KeyError if absent
        return self.arrays.values[:, j], self.arrays.missing[:, j]

    def last_value(self, name: str) -> float | None:
        """The last measured value of a column (None if absent or never measured)."""
        if name not in self.converted:
            return None
        values, missing = self.column(name)
        present = np.flatnonzero(~missing)
        return float(values[present[-1]]) if present.shape[0] else None


def _stack(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    out = np.empty((old.shape[0] + new.shape[0], old.shape[1]), dtype=old.dtype, order="F")
    out[: old.shape[0]], out[old.shape[0] :] = old, new
    return out


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n:,} bytes"


def _header(run_dir: Path, head: FileRead) -> tuple[list[str], int]:
    """The column names and where the rows start, from the first bytes of the file (at most one
    byte more than MAX_METRICS_LINE_BYTES); ``([], 0)`` while the header is still being written."""
    where = label(run_dir, rf.METRICS_CSV)
    data = head.data
    end = data.find(b"\n")
    commas = data.count(b",", 0, end if end >= 0 else len(data))
    if commas >= MAX_METRIC_COLUMNS:
        count = f"{commas + 1:,}" if end >= 0 else f"more than {commas + 1:,}"
        raise RunFileError(f"{where} has {count} columns, more than the {MAX_METRIC_COLUMNS} the run store reads "
                           f"(the trainer writes fewer than 50), so it is not read; {_EDITED}")
    if end < 0:
        if head.size > MAX_METRICS_LINE_BYTES:
            raise RunFileError(f"{where} is malformed: its header (first line) runs on for more than "
                               f"{MAX_METRICS_LINE_BYTES:,} bytes without a line end in a file of {_size(head.size)}, "
                               f"and a header is never that long; {_EDITED}")
        return [], 0  # the header is not complete yet (the run just started): read it again next time
    try:
        columns = data[:end].decode("utf-8").strip().split(",")
    except UnicodeDecodeError:
        raise RunFileError(f"{where} is malformed: its header is not UTF-8 text; {_DAMAGED}") from None
    if not columns or any(not c for c in columns):
        raise RunFileError(f"{where} is malformed: its header has an empty column name; {_DAMAGED}")
    if len(set(columns)) < len(columns):
        twice = next(c for k, c in enumerate(columns) if c in columns[:k])
        raise RunFileError(f"{where} is malformed: its header names column {twice[:100]!r} twice; {_EDITED}")
    return columns, end + 1


def _check_tail(where: str, data: bytes, end: int) -> None:
    """Refuse an unfinished last line longer than any row: a row still being written is short."""
    if len(data) - end > MAX_METRICS_LINE_BYTES:
        raise RunFileError(f"{where} is malformed: its last line runs on for {_size(len(data) - end)} without a "
                           f"line end, and no row of a run is longer than {MAX_METRICS_LINE_BYTES:,} bytes; {_EDITED}")


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
            _check_tail(where, got.data, end)
            grown = replace(previous, size=got.size, mtime_ns=got.mtime_ns, offset=previous.offset + end)
            if not end:
                return grown
            old = previous.arrays
            position = {c: j for j, c in enumerate(previous.columns)}
            include = [position[c] for c in old.columns]
            values, missing = parse_rows(got.data, 0, end, len(previous.columns), previous.rows + 2, where, include)
            return replace(grown, arrays=MetricsArrays(old.columns, _stack(old.values, values),
                                                       _stack(old.missing, missing)))
    # The header first, in a bounded read: a file of one 200 MB line, or of 100k columns, is refused
    # before its rows are read (issue 26).
    head = read_run_file(run_dir, rf.METRICS_CSV, limit=MAX_METRICS_LINE_BYTES + 1, missing=_MISSING)
    columns, offset = _header(run_dir, head)
    if not columns:
        return MetricsFile(head.ino, head.size, head.mtime_ns, 0, [], MetricsArrays([], *_empty(0)))
    got = read_run_file(run_dir, rf.METRICS_CSV, offset=offset, missing=_MISSING)
    if got.ino != head.ino:  # the trainer never replaces it: someone else did, between the two reads
        raise RunFileError(f"{where} was replaced while it was being read; try again")
    end = got.data.rfind(b"\n") + 1
    _check_tail(where, got.data, end)
    same_file = previous is not None and previous.ino == got.ino and previous.columns == columns
    include = _wanted(columns, names, previous if same_file else None)
    values, missing = parse_rows(got.data, 0, end, len(columns), 2, where, include)
    kept = [columns[j] for j in include]
    return MetricsFile(got.ino, got.size, got.mtime_ns, offset + end, columns, MetricsArrays(kept, values, missing))


def as_table(arrays: MetricsArrays) -> MetricsTable:
    """The arrays as a :class:`MetricsTable` (None = not measured): one Python float per cell."""
    rows = arrays.values.tolist()
    for i, j in zip(*np.nonzero(arrays.missing), strict=True):
        rows[i][j] = None
    return MetricsTable(list(arrays.columns), rows)
