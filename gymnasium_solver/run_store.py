"""The read side of the run-folder contract: find runs, read them fast, never import torch.

Everything here is a plain function or the :class:`RunStore` cache; the CLI (``gsolve runs``,
``gsolve show``), the diagnostics and the MCP server are thin adapters over it.

Run references (``ref``) are what a person or a model types: a full run id, a unique prefix of
one, or ``@last`` (the newest run). A reference is a folder *name*, never a path: anything that
could resolve outside the runs folder (separators, ``..``, absolute paths, symlinks out) is
rejected.

Parsing is cached by file identity (inode, size, mtime): repeated calls do not re-read, and a
``metrics.csv`` that grew since the last call is read only from where the last read stopped.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
import yaml
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver import run_folder as rf
from gymnasium_solver.run_folder import MetricsTable, RunInfo, RunStatus

_T = TypeVar("_T")
LAST_REF = "@last"
LIST_RUNS_HINT = "list runs with `gsolve runs` (or the list_runs MCP tool)"


class RunNotFoundError(ValueError):
    """No run matches a reference; the message lists close matches and how to list runs."""


class RunFileError(ValueError):
    """A file in a run folder is missing or malformed; the message names the file and the problem."""


# ---------------------------------------------------------------------------------------------
# Resolving run references
# ---------------------------------------------------------------------------------------------
def list_run_ids(runs_dir: Path | str | None = None) -> list[str]:
    """Names of the run folders in the runs folder, oldest first (run ids sort by creation time).

    Hidden entries and plain files are skipped; an absent runs folder has no runs.
    """
    root = rf.resolve_runs_dir(runs_dir)
    try:
        entries = os.scandir(root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        names = [
            e.name for e in entries
            if not e.name.startswith(".") and e.is_dir() and (not e.is_symlink() or _inside(root, Path(e.path)))
        ]
    names.sort()
    return names


def _validate_ref(ref: Any) -> str:
    if not isinstance(ref, str):
        raise RunNotFoundError(f"a run reference must be a string (run id, unique prefix or @last), got {ref!r}")
    ref = ref.strip()
    if not ref:
        raise RunNotFoundError(f"empty run reference; pass a run id, a unique prefix of one or @last; {LIST_RUNS_HINT}")
    if "/" in ref or "\\" in ref or ref.startswith(".") or "\x00" in ref or os.path.isabs(ref):
        raise RunNotFoundError(
            f"{ref!r} is not a run id: runs are referenced by their folder name inside the runs folder "
            f"(e.g. 20261125-221900-3fa9, a unique prefix of it, or @last), never by a path; {LIST_RUNS_HINT}"
        )
    return ref


def _inside(root: Path, candidate: Path) -> bool:
    try:
        candidate.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def _checked(root: Path, name: str) -> Path:
    path = root / name
    if not _inside(root, path):
        raise RunNotFoundError(
            f"run folder {name!r} points outside the runs folder {root} (a symlink?) and is not read"
        )
    return path


def resolve_run_dir(ref: str, runs_dir: Path | str | None = None) -> Path:
    """The folder of the run ``ref`` names: a full id, a unique id prefix, or ``@last``.

    Raises :class:`RunNotFoundError` (a ValueError) for unknown ids (listing close matches),
    ambiguous prefixes (listing the candidates) and anything path-like.
    """
    root = rf.resolve_runs_dir(runs_dir)
    ref = _validate_ref(ref)
    ids = list_run_ids(root)
    if ref.lower() == LAST_REF:
        if not ids:
            raise RunNotFoundError(f"@last: the runs folder {root} has no runs yet; start one with `gsolve train ENV:VARIANT`")
        # Newest by id; folders not named like run ids (hand-made, renamed) only if nothing else.
        real = [i for i in ids if rf.RUN_ID_PATTERN.match(i)]
        return _checked(root, (real or ids)[-1])
    if ref.startswith("@"):
        raise RunNotFoundError(f"unknown run alias {ref!r}; the only alias is @last (the newest run)")
    if ref in ids:
        return _checked(root, ref)
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return _checked(root, matches[0])
    if matches:
        shown = ", ".join(matches[-10:][::-1])
        more = f" (and {len(matches) - 10} older)" if len(matches) > 10 else ""
        raise RunNotFoundError(f"run prefix {ref!r} is ambiguous: {len(matches)} runs match: {shown}{more}; type more characters")
    if not ids:
        raise RunNotFoundError(f"no run {ref!r}: the runs folder {root} has no runs yet; start one with `gsolve train ENV:VARIANT`")
    # The random suffix is what people mistype most, so compare against whole ids and suffixes.
    close = difflib.get_close_matches(ref, ids, n=5, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise RunNotFoundError(f"no run {ref!r} in {root}{hint}; newest run is {ids[-1]}; {LIST_RUNS_HINT}")


# ---------------------------------------------------------------------------------------------
# Metrics parsing (C-level tokenising, lazy per column)
# ---------------------------------------------------------------------------------------------
# A 1M-row metrics.csv is ~400 MB of text and converting every cell costs seconds, so the store
# converts a column only when someone asks for it. np.loadtxt tokenises in C; reading fields as
# fixed-width byte strings (not floats) keeps empty fields ("not measured") legal, and only the
# non-empty ones are then converted. A grown file is converted only from where the last read
# stopped (one chunk per read).
_FIELD_DTYPE = "S32"  # repr(float) is at most 24 characters, an int64 at most 20
_COLUMNS_PER_PASS = 8  # bounds the temporary (rows x columns x 32 bytes) string table


class MetricsArrays(NamedTuple):
    """metrics.csv as numpy: ``values[i, j]`` is row i, column j; ``missing`` marks empty fields.

    ``values`` holds NaN where a field was empty, so use ``missing`` to tell "not measured"
    apart from a real NaN that the trainer wrote as ``nan``.
    """

    columns: list[str]
    values: np.ndarray  # float64, shape (rows, columns)
    missing: np.ndarray  # bool, same shape

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def col(self, name: str) -> int:
        return self.columns.index(name)


def _locate_bad_line(body: bytes, ncols: int, first_lineno: int) -> str:
    for offset, line in enumerate(body.decode("utf-8", errors="replace").splitlines()):
        parts = line.split(",")
        lineno = first_lineno + offset
        if len(parts) != ncols:
            return f"line {lineno} has {len(parts)} fields, expected {ncols}"
        for p in parts:
            try:
                rf.parse_value(p)
            except ValueError:
                return f"line {lineno}: {p!r} is not a number"
    return "rows could not be parsed as numbers"


def check_rows(body: bytes, ncols: int, first_lineno: int = 2, start: int = 0, end: int | None = None) -> int:
    """Number of complete rows in ``body[start:end]`` (which ends with a newline); ValueError naming
    the first line with the wrong number of fields."""
    end = len(body) if end is None else end
    rows = body.count(b"\n", start, end)
    if body.count(b",", start, end) != rows * (ncols - 1):
        raise ValueError(_locate_bad_line(body[start:end], ncols, first_lineno))
    return rows


_EMPTY_FIELD_ERROR = re.compile(r"could not convert string '' to float64 at row \d+, column (\d+)")


def _loadtxt(body: bytes, start: int, rows: int, usecols: list[int], sparse: set[int]) -> np.ndarray:
    """One C-level pass over the rows: float64 for dense columns, byte strings for ``sparse`` ones."""
    source = io.BytesIO(body)  # shares the bytes: no copy of a file that may be 100s of MB
    source.seek(start)
    dtype = np.dtype([(f"c{j}", _FIELD_DTYPE if j in sparse else np.float64) for j in usecols])
    return np.loadtxt(source, delimiter=",", usecols=usecols, dtype=dtype, ndmin=1, comments=None, max_rows=rows)


def _load_columns_arrow(
    body: bytes, rows: int, cols: list[int], start: int, end: int
) -> dict[int, tuple[np.ndarray, np.ndarray]] | None:
    """Columns ``cols`` of the ``rows`` rows in ``body[start:end]`` via pyarrow's multi-threaded
    CSV reader (about 5x faster than np.loadtxt on a 1M-row file), or None when pyarrow cannot
    parse them: the numpy path then runs and names the offending line."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency; numpy still works
        return None
    ncols = body.count(b",", start, body.find(b"\n", start)) + 1
    names = [f"c{j}" for j in range(ncols)]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(memoryview(body)[start:end]),  # no copy of a file that may be 100s of MB
            # 4 MB blocks: the default 1 MB blocks are ~2x slower on an in-memory buffer.
            read_options=pcsv.ReadOptions(column_names=names, block_size=4 << 20),
            # Only an empty field is "not measured"; 'nan' is a measured NaN, which arrow's
            # default null values would swallow.
            convert_options=pcsv.ConvertOptions(
                include_columns=[names[j] for j in cols],
                column_types={names[j]: pa.float64() for j in cols},
                null_values=[""],
            ),
        )
    except (pa.ArrowInvalid, ValueError):
        return None
    if table.num_rows != rows:
        return None
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for j in cols:
        column = table.column(names[j]).combine_chunks()
        values = np.ascontiguousarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
        missing = np.ascontiguousarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        out[j] = (values, missing)
    return out


def load_columns(
    body: bytes, rows: int, usecols: list[int], first_lineno: int = 2, start: int = 0, end: int | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Convert columns ``usecols`` of the ``rows`` complete rows from ``body[start:]``: one
    ``(values, missing)`` per column.

    Empty fields are missing (value NaN); 'nan'/'inf'/'-inf' parse as such. ValueError naming the
    line of a field that is not a number.
    """
    cols = list(dict.fromkeys(usecols))
    if rows == 0:
        return [(np.empty(0), np.empty(0, dtype=bool)) for _ in usecols]
    fast = _load_columns_arrow(body, rows, cols, start, len(body) if end is None else end)
    if fast is not None:
        return [fast[j] for j in usecols]
    # Columns are parsed as float64 in C. loadtxt stops at the first empty field and names its
    # column, which is then read as byte strings instead (empty = not measured). Empty fields sit
    # in the first rows (rollout/* before an episode ends) or recur (eval/*), so a failed attempt
    # stops early and costs little.
    sparse: set[int] = set()
    while True:
        try:
            table = _loadtxt(body, start, rows, cols, sparse)
            break
        except ValueError as exc:
            m = _EMPTY_FIELD_ERROR.search(str(exc))
            col = int(m.group(1)) - 1 if m else -1
            if col not in cols or col in sparse:
                if sparse == set(cols):
                    raise
                sparse = set(cols)  # not an empty field: the string path names the bad line
            else:
                sparse.add(col)
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for j in cols:
        column = table[f"c{j}"]
        if j in sparse:
            out[j] = _convert_present(column, rows, first_lineno)
        else:
            out[j] = (np.ascontiguousarray(column), np.zeros(rows, dtype=bool))
    return [out[j] for j in usecols]


def _convert_present(fields: np.ndarray, rows: int, first_lineno: int) -> tuple[np.ndarray, np.ndarray]:
    missing = fields == b""
    values = np.full(rows, np.nan)
    present = np.flatnonzero(~missing)
    try:
        values[present] = fields[present].astype(np.float64)
    except ValueError:
        for i in present.tolist():
            try:
                float(fields[i])
            except ValueError:
                text = fields[i].decode("utf-8", errors="replace")
                raise ValueError(f"line {first_lineno + i}: {text!r} is not a number") from None
        raise
    return values, missing


def parse_metrics_rows(body: bytes, ncols: int, first_lineno: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Parse complete CSV rows (every line ends in a newline) into ``(values, missing)`` arrays.

    Raises ValueError naming the first malformed line.
    """
    rows = check_rows(body, ncols, first_lineno)
    values = np.empty((rows, ncols))
    missing = np.empty((rows, ncols), dtype=bool)
    for lo in range(0, ncols, _COLUMNS_PER_PASS):
        cols = list(range(lo, min(lo + _COLUMNS_PER_PASS, ncols)))
        for j, (v, m) in zip(cols, load_columns(body, rows, cols, first_lineno), strict=True):
            values[:, j], missing[:, j] = v, m
    return values, missing


@dataclass
class _Chunk:
    body: bytes  # body[start:end] are complete rows, each ending in a newline
    start: int
    end: int
    rows: int
    first_lineno: int


@dataclass
class _MetricsCache:
    ino: int
    size: int
    mtime_ns: int
    offset: int  # bytes of the file consumed (header + complete rows)
    columns: list[str]
    chunks: list[_Chunk] = field(default_factory=list)
    rows: int = 0
    # per column: rows converted so far (always whole chunks), and the converted arrays
    converted: dict[int, tuple[int, np.ndarray, np.ndarray]] = field(default_factory=dict)
    arrays: MetricsArrays | None = None
    table: MetricsTable | None = None
    results: dict[tuple[Any, ...], Any] = field(default_factory=dict)  # RunStore.memo

    def add_chunk(self, body: bytes, start: int, end: int, path: Path) -> None:
        try:
            rows = check_rows(body, len(self.columns), self.rows + 2, start, end)
        except ValueError as exc:
            raise RunFileError(f"{path} is malformed: {exc}") from None
        if rows:
            self.chunks.append(_Chunk(body, start, end, rows, self.rows + 2))
            self.rows += rows
            self.arrays = None
            self.table = None

    def ensure(self, js: list[int], path: Path) -> None:
        """Convert the rows of columns ``js`` not converted yet, several columns per pass."""
        start = 0
        for chunk in self.chunks:
            need = [j for j in dict.fromkeys(js) if self.converted.get(j, (0,))[0] <= start]
            for lo in range(0, len(need), _COLUMNS_PER_PASS):
                batch = need[lo : lo + _COLUMNS_PER_PASS]
                try:
                    parts = load_columns(chunk.body, chunk.rows, batch, chunk.first_lineno, chunk.start, chunk.end)
                except ValueError as exc:
                    raise RunFileError(f"{path} is malformed: {exc}") from None
                for j, (v, m) in zip(batch, parts, strict=True):
                    have = self.converted.get(j)
                    if have is None:
                        self.converted[j] = (chunk.rows, v, m)
                    else:
                        self.converted[j] = (have[0] + chunk.rows, np.concatenate([have[1], v]),
                                             np.concatenate([have[2], m]))
            start += chunk.rows

    def column(self, j: int, path: Path) -> tuple[np.ndarray, np.ndarray]:
        """Column j as (values, missing), converting only rows not converted before."""
        self.ensure([j], path)
        if j not in self.converted:
            return np.empty(0), np.empty(0, dtype=bool)
        _, v, m = self.converted[j]
        return v, m

    def full(self, path: Path) -> MetricsArrays:
        if self.arrays is None:
            n, c = self.rows, len(self.columns)
            values, missing = np.empty((n, c)), np.empty((n, c), dtype=bool)
            self.ensure(list(range(c)), path)
            for j in range(c):
                values[:, j], missing[:, j] = self.column(j, path)
            self.arrays = MetricsArrays(self.columns, values, missing)
        return self.arrays

    def last_value(self, j: int, path: Path) -> float | None:
        """Last measured value of column j, reading the last rows' text before converting a column."""
        if not self.chunks:
            return None
        last = self.chunks[-1]
        lo = max(last.start, last.end - 65536)
        tail = last.body[lo : last.end].split(b"\n")[:-1]
        if lo > last.start:
            tail = tail[1:]  # the first line was cut by the window
        for line in reversed(tail):
            parts = line.split(b",")
            if len(parts) == len(self.columns) and parts[j]:
                try:
                    return float(parts[j])
                except ValueError:
                    break
        values, missing = self.column(j, path)
        present = np.flatnonzero(~missing)
        return float(values[present[-1]]) if present.shape[0] else None


@dataclass
class _FileCache:
    key: tuple[int, int, int]
    value: Any


def _file_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------
class RunStore:
    """Cached, read-only access to the runs folder. Thread-safe; never imports torch."""

    def __init__(self, runs_dir: Path | str | None = None):
        self.runs_dir: Path = rf.resolve_runs_dir(runs_dir)
        self._lock = threading.RLock()
        self._info: dict[Path, _FileCache] = {}
        self._config: dict[Path, _FileCache] = {}
        self._metrics: dict[Path, _MetricsCache] = {}

    def resolve(self, ref: str) -> Path:
        """The folder of run ``ref`` (full id, unique prefix or @last); see :func:`resolve_run_dir`."""
        return resolve_run_dir(ref, self.runs_dir)

    def run_ids(self) -> list[str]:
        """All run folder names, oldest first."""
        return list_run_ids(self.runs_dir)

    # -- run.json ---------------------------------------------------------------------------
    def info(self, run_dir: Path) -> RunInfo:
        """Parsed run.json, cached by file identity. RunFileError if missing or malformed."""
        path = run_dir / rf.RUN_JSON
        try:
            st = path.stat()
        except FileNotFoundError:
            raise RunFileError(
                f"{path} is missing: the run folder has no run.json (not a run, or its trainer died before "
                f"writing it)"
            ) from None
        key = _file_key(st)
        with self._lock:
            hit = self._info.get(run_dir)
            if hit is not None and hit.key == key:
                return hit.value  # type: ignore[no-any-return]
        try:
            info = rf.read_run_info(run_dir)
        except FileNotFoundError:
            raise RunFileError(f"{path} disappeared while being read") from None
        except (ValueError, OSError) as exc:
            raise RunFileError(f"{path} is malformed and cannot be read: {exc}") from None
        with self._lock:
            self._info[run_dir] = _FileCache(key, info)
        return info

    def status(self, run_dir: Path) -> RunStatus:
        """The status to report: a 'running' run whose process died or went silent is 'crashed'."""
        return rf.effective_status(self.info(run_dir))

    # -- config.yaml ------------------------------------------------------------------------
    def config(self, run_dir: Path) -> dict[str, Any]:
        """Parsed config.yaml (the fully resolved config), cached. RunFileError if missing/malformed."""
        path = run_dir / rf.CONFIG_YAML
        try:
            st = path.stat()
        except FileNotFoundError:
            raise RunFileError(f"{path} is missing: this run folder has no resolved config") from None
        key = _file_key(st)
        with self._lock:
            hit = self._config.get(run_dir)
            if hit is not None and hit.key == key:
                return dict(hit.value)
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
            raise RunFileError(f"{path} is malformed: not valid YAML ({exc})") from None
        if not isinstance(raw, dict):
            raise RunFileError(f"{path} is malformed: expected a mapping of config keys, got {type(raw).__name__}")
        with self._lock:
            self._config[run_dir] = _FileCache(key, raw)
        return dict(raw)

    # -- metrics.csv ------------------------------------------------------------------------
    def metric_arrays(self, run_dir: Path) -> MetricsArrays:
        """metrics.csv as numpy arrays (every column), cached; a grown file is read only from where
        we stopped. A torn last line (a row still being written) is left for the next call.
        RunFileError if the file is missing or malformed."""
        with self._lock:
            return self._read_metrics(run_dir).full(run_dir / rf.METRICS_CSV)

    def metric_columns(self, run_dir: Path) -> list[str]:
        """The metrics.csv header (cheap after the first read)."""
        with self._lock:
            return list(self._read_metrics(run_dir).columns)

    def metric_rows(self, run_dir: Path) -> int:
        """Complete rows in metrics.csv (no conversion)."""
        with self._lock:
            return self._read_metrics(run_dir).rows

    def metric_column(self, run_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
        """One column as ``(values, missing)``; converts only this column. KeyError if absent."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            if name not in cache.columns:
                raise KeyError(name)
            return cache.column(cache.columns.index(name), run_dir / rf.METRICS_CSV)

    def prefetch_columns(self, run_dir: Path, names: list[str]) -> None:
        """Convert several columns in one pass over the file (faster than one by one)."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            cache.ensure([cache.columns.index(n) for n in names if n in cache.columns], run_dir / rf.METRICS_CSV)

    def metric_missing(self, run_dir: Path, name: str) -> np.ndarray:
        """Rows where column ``name`` is empty ("not measured")."""
        return self.metric_column(run_dir, name)[1]

    def last_value(self, run_dir: Path, name: str) -> float | None:
        """The last measured value of a column (None if never measured)."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            if name not in cache.columns:
                return None
            return cache.last_value(cache.columns.index(name), run_dir / rf.METRICS_CSV)

    def memo(self, run_dir: Path, key: tuple[Any, ...], compute: Callable[[], _T]) -> _T:
        """A result derived from this run's metrics.csv, recomputed only when the file changed."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            full_key = (cache.offset, *key)
            if full_key not in cache.results:
                if len(cache.results) >= 32:
                    cache.results.pop(next(iter(cache.results)))
                cache.results[full_key] = compute()
            return cache.results[full_key]  # type: ignore[no-any-return]

    def metrics(self, run_dir: Path) -> MetricsTable:
        """metrics.csv as a :class:`MetricsTable` (None = not measured), cached like metric_arrays."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            if cache.table is None:
                arrays = cache.full(run_dir / rf.METRICS_CSV)
                rows = arrays.values.tolist()
                if arrays.missing.any():
                    for i, j in zip(*np.nonzero(arrays.missing), strict=True):
                        rows[i][j] = None
                cache.table = MetricsTable(list(arrays.columns), rows)
            return cache.table

    def _read_metrics(self, run_dir: Path) -> _MetricsCache:
        path = run_dir / rf.METRICS_CSV
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed below; fstat needs the open handle
        except FileNotFoundError:
            raise RunFileError(f"{path} is missing: the run has not written any metrics") from None
        with f:
            st = os.fstat(f.fileno())
            cache = self._metrics.get(run_dir)
            if cache is not None and cache.columns and cache.ino == st.st_ino and st.st_size >= cache.offset:
                if st.st_size != cache.size or st.st_mtime_ns != cache.mtime_ns:
                    f.seek(cache.offset)
                    tail = f.read()
                    end = tail.rfind(b"\n") + 1  # a torn last line is left for the next call
                    if end:
                        cache.add_chunk(tail, 0, end, path)
                        cache.offset += end
                    cache.size, cache.mtime_ns = st.st_size, st.st_mtime_ns
                return cache
            data = f.read()
        cache = self._parse_header(path, data, st)
        if cache.columns:
            end = data.rfind(b"\n") + 1
            cache.add_chunk(data, cache.offset, end, path)
            cache.offset = end
        self._metrics[run_dir] = cache
        return cache

    @staticmethod
    def _parse_header(path: Path, data: bytes, st: os.stat_result) -> _MetricsCache:
        end = data.find(b"\n")
        if end < 0:
            # Header not complete yet (run just started): no columns, read it again next time.
            return _MetricsCache(st.st_ino, st.st_size, st.st_mtime_ns, 0, [])
        try:
            columns = data[:end].decode("utf-8").strip().split(",")
        except UnicodeDecodeError:
            raise RunFileError(f"{path} is malformed: its header is not UTF-8 text") from None
        if not columns or any(not c for c in columns):
            raise RunFileError(f"{path} is malformed: empty column name in header {data[:end][:200]!r}")
        return _MetricsCache(st.st_ino, st.st_size, st.st_mtime_ns, end + 1, columns)


# ---------------------------------------------------------------------------------------------
# Queries shared by the CLI and the MCP server. Results are pydantic models, small by design.
# ---------------------------------------------------------------------------------------------
MAX_LIST_LIMIT = 50  # ~500 characters per run: a full page stays near 6k tokens
MAX_POINTS_PER_SERIES = 1000
MAX_POINTS_TOTAL = 2000
MAX_NON_FINITE_LISTED = 20
MAX_LOG_LINES = 200
MAX_LOG_LINE_CHARS = 400
MAX_LOG_CHARS = 40_000  # ~10k tokens, whatever limit is asked
# The hyperparameters shown in summaries; config.yaml has every field (get_config / the resource).
# Which of them a run shows comes from the Config fields' own declaration (config.applies_to).
KEY_HYPERPARAMETERS = (
    "n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda",
    "clip_range", "ent_coef", "vf_coef", "max_grad_norm", "target_kl", "hidden_sizes",
    "normalize_observations", "reward_scale", "log_std_init", "episodes_per_update", "use_baseline", "seed",
)  # fmt: skip
DEFAULT_METRICS = (
    rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN, rf.M.POLICY_LOSS, rf.M.VALUE_LOSS, rf.M.ENTROPY,
    rf.M.APPROX_KL, rf.M.EXPLAINED_VARIANCE,
)  # fmt: skip


def check_limit(name: str, value: int, maximum: int, minimum: int = 1) -> int:
    """Validate a count argument with a message that says the allowed range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer between {minimum} and {maximum}, got {value!r}")
    if value < minimum or value > maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


# Curve values are rounded to this many significant digits: enough to read a curve and to tell
# 474.96 from a threshold of 475, at about half the characters of full precision.
SIGNIFICANT_DIGITS = 5


def _round(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    return float(f"{x:.{digits}g}")


def key_hyperparameters(config: dict[str, Any], action_kind: str | None = None) -> dict[str, Any]:
    """The KEY_HYPERPARAMETERS of a config that mean something for its algorithm and action space."""
    algo = config.get("algo")
    return {k: config[k] for k in KEY_HYPERPARAMETERS
            if k in config and config_mod.applies_to(k, algo if isinstance(algo, str) else None, action_kind)}


NonFiniteKind = Literal["nan", "inf", "-inf"]


def _non_finite_label(x: float) -> NonFiniteKind:
    return "nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")


class EvalSummary(BaseModel):
    return_mean: float
    return_std: float
    env_steps: int
    wall_seconds: float


class RunSummary(BaseModel):
    """One run in a listing. ``problem`` is set (and most fields empty) when run.json is unreadable."""

    run_id: str
    config_id: str | None = None
    env_id: str | None = None
    algo: str | None = None
    status: str = Field(description="running, completed, failed, stopped, crashed (process gone), or unreadable")
    stop_reason: str | None = None
    created_at: str | None = None
    env_steps: int = 0
    max_env_steps: int | None = None
    progress: float | None = Field(default=None, description="env_steps / max_env_steps, 0..1")
    best_eval_return: float | None = None
    final_eval_return: float | None = Field(default=None, description="return of the latest evaluation")
    reward_threshold: float | None = None
    solved: bool = False
    solved_at_env_steps: int | None = None
    solved_at_wall_seconds: float | None = None
    problem: str | None = None


def summarize_run(store: RunStore, run_dir: Path) -> RunSummary:
    """A RunSummary for one run folder; a missing/malformed run.json becomes ``problem``, not an error."""
    try:
        info = store.info(run_dir)
    except RunFileError as exc:
        return RunSummary(run_id=run_dir.name, status="unreadable", problem=str(exc))
    return RunSummary(
        run_id=info.run_id,
        config_id=info.config_id,
        env_id=info.env_id,
        algo=info.algo,
        status=str(rf.effective_status(info)),
        stop_reason=None if info.stop_reason is None else str(info.stop_reason),
        created_at=info.created_at,
        env_steps=info.progress.env_steps,
        max_env_steps=info.max_env_steps,
        progress=round(min(info.progress.env_steps / info.max_env_steps, 1.0), 4) if info.max_env_steps else None,
        best_eval_return=None if info.best_eval is None else info.best_eval.return_mean,
        final_eval_return=None if info.last_eval is None else info.last_eval.return_mean,
        reward_threshold=info.reward_threshold,
        solved=info.solved,
        solved_at_env_steps=None if info.solved_at is None else info.solved_at.env_steps,
        solved_at_wall_seconds=None if info.solved_at is None else info.solved_at.wall_seconds,
    )


class RunList(BaseModel):
    runs: list[RunSummary] = Field(description="newest first")
    total_runs: int = Field(description="run folders in the runs folder, before filtering")
    next_cursor: str | None = Field(
        default=None, description="pass as cursor to get the next (older) page; None when this is the last page"
    )
    note: str = ""


def _matches(s: RunSummary, env_id: str | None, algo: str | None, status: str | None, solved: bool | None) -> bool:
    if env_id is not None and s.env_id != env_id:
        return False
    if algo is not None and s.algo != algo:
        return False
    if status is not None and s.status != status:
        return False
    return solved is None or s.solved == solved


_STATUSES = [str(s) for s in RunStatus] + ["unreadable"]


def list_runs(
    store: RunStore,
    env_id: str | None = None,
    algo: str | None = None,
    status: str | None = None,
    solved: bool | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> RunList:
    """Runs newest first, filtered, one page of at most ``limit``; ``next_cursor`` continues."""
    check_limit("limit", limit, MAX_LIST_LIMIT)
    if status is not None and status not in _STATUSES:
        raise ValueError(f"unknown status {status!r}; use one of {', '.join(_STATUSES)}")
    ids = store.run_ids()
    if cursor is not None:
        cursor = _validate_ref(cursor)
        if cursor not in ids:
            raise RunNotFoundError(f"cursor {cursor!r} is not a run id; pass the next_cursor of a previous list_runs answer")
    candidates = [i for i in reversed(ids) if cursor is None or i < cursor]
    out: list[RunSummary] = []
    next_cursor = None
    for run_id in candidates:
        s = summarize_run(store, store.runs_dir / run_id)
        if not _matches(s, env_id, algo, status, solved):
            continue
        if len(out) == limit:
            next_cursor = out[-1].run_id
            break
        out.append(s)
    note = ""
    if not out:
        filters = {k: v for k, v in dict(env_id=env_id, algo=algo, status=status, solved=solved).items() if v is not None}
        envs = sorted({s.env_id for s in (summarize_run(store, store.runs_dir / i) for i in ids[-200:]) if s.env_id})
        where = store.runs_dir.resolve()
        if not ids:
            return RunList(runs=[], total_runs=0, note=f"the runs folder {where} has no runs yet; start one with "
                           "start_training or `gsolve train ENV:VARIANT`")
        note = (
            f"no runs match {filters or 'the request'} in {where} ({len(ids)} runs in total"
            + (f"; recent environments: {', '.join(envs)}" if envs else "")
            + "). Start one with start_training or `gsolve train ENV:VARIANT`."
        )
    elif next_cursor:
        note = f"showing {len(out)}; more runs match: call again with cursor={next_cursor!r}"
    return RunList(runs=out, total_runs=len(ids), next_cursor=next_cursor, note=note)


# -- metrics ----------------------------------------------------------------------------------
def unknown_metric_error(names: str | list[str], available: list[str]) -> ValueError:
    """One error for every unknown name, each with its close matches, and the names that exist."""
    parts = []
    for name in [names] if isinstance(names, str) else names:
        close = difflib.get_close_matches(name, available, n=3, cutoff=0.4)
        parts.append(f"{name!r}" + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""))
    return ValueError(f"this run has no metric {', '.join(parts)}. Available: {', '.join(available)}")



class MetricSeries(BaseModel):
    """One metric against env_steps, as parallel arrays. Only rows where it was measured; nan/inf
    values are counted and located apart. What a metric means: list_available_metrics."""

    metric: str
    env_steps: list[int] = Field(description="x values (environment steps)")
    values: list[float] = Field(description=f"y values at env_steps, {SIGNIFICANT_DIGITS} significant digits; finite only")
    points_total: int = Field(description="measured points in the requested range, before downsampling")
    downsampled: bool = Field(description="true when env_steps/values hold fewer than points_total points")
    first: float | None = None
    last: float | None = None
    min: float | None = None
    min_at_env_steps: int | None = None
    max: float | None = None
    max_at_env_steps: int | None = None
    non_finite_count: int = 0
    non_finite: dict[NonFiniteKind, list[int]] = Field(
        default_factory=dict, description=f"env steps where the metric was nan/inf, by kind (first {MAX_NON_FINITE_LISTED})"
    )


class MetricsResult(BaseModel):
    run_id: str
    rows_total: int = Field(description="rows in metrics.csv")
    env_steps_range: list[int] = Field(description="[first, last] env_steps of the rows considered")
    series: list[MetricSeries]
    metrics_available: int = Field(description="metric columns this run has; list_available_metrics names and explains them")
    note: str = Field(default="", description="what was cut (downsampling, limits) and how to get more")


def first_non_finite(s: MetricSeries) -> tuple[int, str] | None:
    """(env_steps, kind) of the earliest listed nan/inf point of a series, or None."""
    firsts = [(steps[0], kind) for kind, steps in s.non_finite.items() if steps]
    return min(firsts) if firsts else None


def downsample_indices(y: np.ndarray, max_points: int) -> np.ndarray:
    """Indices of at most max_points points that keep the first, last, and each bucket's min and max."""
    n = y.shape[0]
    if n <= max_points:
        return np.arange(n)
    buckets = max((max_points - 2) // 2, 1)  # two points per bucket plus the first and last
    k = n // buckets
    body = y[: (buckets - 1) * k].reshape(buckets - 1, k)
    base = np.arange(buckets - 1) * k
    start = (buckets - 1) * k  # the last bucket also takes the remainder of n / buckets
    tail = y[start:]
    picks = [base + np.argmin(body, axis=1), base + np.argmax(body, axis=1), np.array([0, n - 1]),
             np.array([start + int(np.argmin(tail)), start + int(np.argmax(tail))])]
    return np.unique(np.concatenate(picks))


def _series(store: RunStore, run_dir: Path, name: str, rows: np.ndarray, x_all: np.ndarray,
            max_points: int) -> MetricSeries:
    values, missing = store.metric_column(run_dir, name)
    measured = ~missing[rows]
    y = values[rows][measured]
    x = x_all[measured]
    finite = np.isfinite(y)
    yf, xf = y[finite], x[finite]
    idx = downsample_indices(yf, max_points)
    bad = np.flatnonzero(~finite)
    non_finite: dict[NonFiniteKind, list[int]] = {}
    for i in bad[:MAX_NON_FINITE_LISTED]:
        non_finite.setdefault(_non_finite_label(float(y[i])), []).append(int(x[i]))
    s = MetricSeries(
        metric=name,
        env_steps=[int(v) for v in xf[idx]],
        values=[_round(float(v)) for v in yf[idx]],
        points_total=int(y.shape[0]),
        downsampled=len(idx) < yf.shape[0],
        non_finite_count=int(bad.shape[0]),
        non_finite=non_finite,
    )
    if yf.shape[0]:
        imin, imax = int(np.argmin(yf)), int(np.argmax(yf))
        s.first, s.last = _round(float(yf[0])), _round(float(yf[-1]))
        s.min, s.min_at_env_steps = _round(float(yf[imin])), int(xf[imin])
        s.max, s.max_at_env_steps = _round(float(yf[imax])), int(xf[imax])
    return s


def _choose_metrics(columns: list[str], available: list[str], metrics: list[str] | None) -> list[str]:
    if not metrics:
        return [m for m in DEFAULT_METRICS if m in columns]
    unknown = [m for m in dict.fromkeys(metrics) if m not in columns]
    if unknown:
        raise unknown_metric_error(unknown, available)
    return list(dict.fromkeys(metrics))


def query_metrics(
    store: RunStore,
    run_dir: Path,
    metrics: list[str] | None = None,
    start_env_steps: int | None = None,
    end_env_steps: int | None = None,
    max_points: int = 200,
) -> MetricsResult:
    """Selected metric series over an env-step range, each downsampled to at most ``max_points``.

    Downsampling keeps every bucket's min and max (spikes stay visible) and the first and last
    point; nan/inf values are counted and located separately (JSON has no NaN). The answer is
    memoised until metrics.csv changes.
    """
    key = ("query_metrics", tuple(metrics or ()), start_env_steps, end_env_steps, max_points)
    result = store.memo(run_dir, key, lambda: _query_metrics(store, run_dir, metrics, start_env_steps,
                                                             end_env_steps, max_points))
    return result.model_copy(deep=True)


def _query_metrics(
    store: RunStore,
    run_dir: Path,
    metrics: list[str] | None,
    start_env_steps: int | None,
    end_env_steps: int | None,
    max_points: int,
) -> MetricsResult:
    check_limit("max_points", max_points, MAX_POINTS_PER_SERIES, minimum=10)
    columns = store.metric_columns(run_dir)
    if not columns:
        raise RunFileError(f"{run_dir / rf.METRICS_CSV} has no header yet: the run is just starting; try again shortly")
    available = [c for c in columns if c not in (rf.M.ENV_STEPS,)]
    chosen = _choose_metrics(columns, available, metrics)
    if start_env_steps is not None and end_env_steps is not None and start_env_steps > end_env_steps:
        raise ValueError(f"start_env_steps ({start_env_steps}) is after end_env_steps ({end_env_steps})")
    notes = []
    budget = max(MAX_POINTS_TOTAL // max(len(chosen), 1), 10)
    if budget < max_points:
        notes.append(f"max_points lowered to {budget} per metric to keep the answer small; ask for fewer metrics for more")
        max_points = budget
    # x axis: env_steps (the contract's step counter); a file without it falls back to row numbers.
    store.prefetch_columns(run_dir, [rf.M.ENV_STEPS, *chosen])  # one pass over the file for all
    if rf.M.ENV_STEPS in columns:
        steps = store.metric_column(run_dir, rf.M.ENV_STEPS)[0]
    else:
        steps = np.arange(store.metric_missing(run_dir, columns[0]).shape[0], dtype=float)
    n = steps.shape[0]
    rows = np.arange(n)
    if n:
        keep = np.isfinite(steps)  # a row without a usable step count cannot be placed on the x axis
        if start_env_steps is not None:
            keep &= steps >= start_env_steps
        if end_env_steps is not None:
            keep &= steps <= end_env_steps
        rows = np.flatnonzero(keep)
    x_all = steps[rows]
    series = [_series(store, run_dir, m, rows, x_all, max_points) for m in chosen]
    cut = [s.metric for s in series if s.downsampled]
    if cut:
        notes.append(
            f"downsampled to at most {max_points} points each (bucket min/max kept): {', '.join(cut)}; narrow "
            f"start_env_steps/end_env_steps or raise max_points (up to {MAX_POINTS_PER_SERIES}) for more detail"
        )
    if any(s.non_finite_count > MAX_NON_FINITE_LISTED for s in series):
        notes.append(f"only the first {MAX_NON_FINITE_LISTED} non-finite points per metric are listed")
    if n == 0:
        notes.append("metrics.csv has no complete rows yet (the first iteration has not finished)")
    elif rows.shape[0] == 0:
        notes.append("no rows in the requested env-step range")
    return MetricsResult(
        run_id=run_dir.name,
        rows_total=n,
        env_steps_range=[int(x_all[0]), int(x_all[-1])] if x_all.shape[0] else [],
        series=series,
        metrics_available=len(available),
        note="; ".join(notes),
    )


class MetricInfo(BaseModel):
    name: str
    description: str | None
    measured_rows: int = Field(description="rows where the metric has a value")
    last: float | str | None = Field(default=None, description="last measured value ('nan'/'inf' if non-finite)")


class MetricList(BaseModel):
    run_id: str
    rows_total: int
    metrics: list[MetricInfo]


def available_metrics(store: RunStore, run_dir: Path) -> MetricList:
    """Every column of the run's metrics.csv with its meaning, how often it was measured and its last value."""
    out = []
    rows = 0
    store.prefetch_columns(run_dir, store.metric_columns(run_dir))
    for name in store.metric_columns(run_dir):
        missing = store.metric_missing(run_dir, name)  # from field lengths: no number is converted
        rows = int(missing.shape[0])
        v = store.last_value(run_dir, name)
        last: float | str | None = v if v is None or np.isfinite(v) else _non_finite_label(v)
        out.append(MetricInfo(name=name, description=rf.METRIC_DESCRIPTIONS.get(name),
                              measured_rows=int(rows - missing.sum()), last=last))
    return MetricList(run_id=run_dir.name, rows_total=rows, metrics=out)


# -- run details --------------------------------------------------------------------------------
class FileState(BaseModel):
    name: str
    present: bool
    bytes: int | None = None
    problem: str | None = None


class PresetDifference(BaseModel):
    value: Any = Field(description="this run's value")
    preset: Any = Field(description="the preset's value")


class RunDetails(BaseModel):
    """Everything about one run that fits on a screen: summary, hyperparameters, failure, files."""

    summary: RunSummary
    variant: str | None = None
    seed: int | None = None
    finished_at: str | None = None
    updated_at: str | None = None
    wall_seconds: float | None = None
    iteration: int | None = None
    failure: dict[str, Any] | None = Field(default=None, description="structured failure (kind, message, where)")
    best_eval: EvalSummary | None = None
    final_eval: EvalSummary | None = None
    hyperparameters: dict[str, Any] = Field(
        default_factory=dict, description="key hyperparameters that apply to this run; get_config has every field"
    )
    preset: str | None = Field(
        default=None, description="the ENV:VARIANT preset compared against, or why there is no comparison"
    )
    differences_from_preset: dict[str, PresetDifference] = Field(
        default_factory=dict,
        description="every config key whose value differs from the preset as this machine has it now",
    )
    overrides: dict[str, Any] = Field(default_factory=dict, description="--set overrides given at start")
    parent_run_id: str | None = None
    applied_changes: dict[str, Any] = Field(default_factory=dict)
    action_space: dict[str, Any] | None = None
    observation_shape: list[int] | None = None
    metrics_rows: int | None = None
    files: list[FileState]
    versions: dict[str, str] = Field(default_factory=dict)


def _eval(e: rf.EvalRecord | None) -> EvalSummary | None:
    if e is None:
        return None
    return EvalSummary(return_mean=e.return_mean, return_std=e.return_std, env_steps=e.env_steps, wall_seconds=e.wall_seconds)


def preset_comparison(config: dict[str, Any], config_id: str | None) -> tuple[str, dict[str, PresetDifference]]:
    """(preset, differences): the ENV:VARIANT a run's config came from and every key that differs
    from it (config.preset_differences, as the diagnosis uses), or a sentence saying why not."""
    if config.get("env_id") and config.get("variant"):
        config_id = f"{config['env_id']}:{config['variant']}"
    if not config or config_id is None:
        return "no comparison: the run's config.yaml is missing or unreadable", {}
    reference = config_mod.preset_config(config_id)
    if reference is None:
        return f"no comparison: this machine has no preset {config_id} (get_config shows the run's config)", {}
    diffs = config_mod.preset_differences(config, reference)
    return config_id, {k: PresetDifference(value=v, preset=p) for k, (v, p) in diffs.items()}


def run_details(store: RunStore, run_dir: Path) -> RunDetails:
    """A RunDetails for one run. Unreadable files are reported in ``files``, never raised."""
    files: list[FileState] = []
    config: dict[str, Any] = {}
    rows: int | None = None
    for name in (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV, rf.RUN_LOG):
        p = run_dir / name
        st = FileState(name=name, present=p.is_file(), bytes=p.stat().st_size if p.is_file() else None)
        try:
            if name == rf.RUN_JSON:
                store.info(run_dir)
            elif name == rf.CONFIG_YAML:
                config = store.config(run_dir)
            elif name == rf.METRICS_CSV:
                rows = store.metric_rows(run_dir)
        except RunFileError as exc:
            st.problem = str(exc)
        files.append(st)
    summary = summarize_run(store, run_dir)
    info = None if summary.problem else store.info(run_dir)
    kind = None if info is None or info.action_space is None else info.action_space.kind
    preset, differences = preset_comparison(config, summary.config_id)
    details = RunDetails(summary=summary, files=files, metrics_rows=rows, preset=preset,
                         hyperparameters=key_hyperparameters(config, kind), differences_from_preset=differences)
    if info is None:
        return details
    details.variant, details.seed = info.variant, info.seed
    details.finished_at, details.updated_at = info.finished_at, info.updated_at
    details.wall_seconds, details.iteration = info.progress.wall_seconds, info.progress.iteration
    if info.failure is not None:
        details.failure = info.failure.model_dump()
        if len(info.failure.message) > 2000:  # a traceback can be long; get_run_logs has it all
            details.failure["message"] = info.failure.message[:2000] + " [...] (see get_run_logs)"
    details.best_eval, details.final_eval = _eval(info.best_eval), _eval(info.last_eval)
    details.overrides, details.parent_run_id = info.overrides, info.parent_run_id
    details.applied_changes = info.applied_changes
    details.action_space = None if info.action_space is None else info.action_space.model_dump(exclude_none=True)
    details.observation_shape, details.versions = info.observation_shape, info.versions
    return details


# -- training status ----------------------------------------------------------------------------
class TrainingStatus(BaseModel):
    run_id: str
    status: str = Field(description="running, completed, failed, stopped or crashed (process gone)")
    stop_reason: str | None = None
    env_steps: int
    max_env_steps: int
    progress: float = Field(description="env_steps / max_env_steps, 0..1")
    iteration: int
    wall_seconds: float
    fps: float | None = Field(default=None, description="env steps per second over the last iteration")
    eta_seconds: float | None = Field(default=None, description="rough time to spend the budget at the current fps")
    heartbeat_age_seconds: float | None = Field(default=None, description="seconds since run.json was last rewritten")
    pid: int | None = None
    best_eval_return: float | None = None
    last_eval_return: float | None = None
    reward_threshold: float | None = None
    solved: bool = False
    solved_at_env_steps: int | None = None
    failure: str | None = None
    finished: bool = Field(description="True once the run will not change any more")


def training_status(store: RunStore, run_dir: Path) -> TrainingStatus:
    """Live status of a run: progress, speed, ETA, latest evaluation, and crashed detection."""
    info = store.info(run_dir)
    status = rf.effective_status(info)
    fps = None
    try:
        v = store.last_value(run_dir, rf.M.FPS)
        fps = v if v is not None and np.isfinite(v) else None
    except RunFileError:
        pass
    remaining = max(info.max_env_steps - info.progress.env_steps, 0)
    import time

    try:
        age = round(time.time() - rf.parse_iso(info.updated_at), 1)
    except ValueError:
        age = None
    return TrainingStatus(
        run_id=info.run_id,
        status=str(status),
        stop_reason=None if info.stop_reason is None else str(info.stop_reason),
        env_steps=info.progress.env_steps,
        max_env_steps=info.max_env_steps,
        progress=round(min(info.progress.env_steps / max(info.max_env_steps, 1), 1.0), 4),
        iteration=info.progress.iteration,
        wall_seconds=info.progress.wall_seconds,
        fps=fps,
        eta_seconds=round(remaining / fps, 1) if status == RunStatus.RUNNING and fps else None,
        heartbeat_age_seconds=age,
        pid=info.pid,
        best_eval_return=None if info.best_eval is None else info.best_eval.return_mean,
        last_eval_return=None if info.last_eval is None else info.last_eval.return_mean,
        reward_threshold=info.reward_threshold,
        solved=info.solved,
        solved_at_env_steps=None if info.solved_at is None else info.solved_at.env_steps,
        failure=None if info.failure is None else f"{info.failure.kind}: {info.failure.message}"[:1000],
        finished=status != RunStatus.RUNNING,
    )


# -- logs ---------------------------------------------------------------------------------------
class LogTail(BaseModel):
    run_id: str
    lines: list[str] = Field(description="oldest first; long lines are cut at 400 characters")
    matched_lines_scanned: int = Field(description="matching lines found in the scanned part of the log")
    log_bytes: int
    scanned_bytes: int = Field(description="bytes read from the end of run.log")
    note: str = ""


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LOG_SCAN_BYTES = 4 * 1024 * 1024


def tail_log(run_dir: Path, limit: int = 50, level: str | None = None, contains: str | None = None) -> LogTail:
    """The last ``limit`` lines of run.log, optionally only lines at ``level`` or above, or containing text.

    Reads at most the last 4 MiB, so it is fast on any log size. Traceback lines count as ERROR.
    """
    check_limit("limit", limit, MAX_LOG_LINES)
    min_rank = 0
    if level is not None:
        lvl = level.upper()
        if lvl not in _LOG_LEVELS:
            raise ValueError(f"unknown level {level!r}; use one of {', '.join(_LOG_LEVELS)}")
        min_rank = _LOG_LEVELS.index(lvl)
    path = run_dir / rf.RUN_LOG
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            start = max(size - _LOG_SCAN_BYTES, 0)
            f.seek(start)
            text = f.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise RunFileError(f"{path} is missing: this run has no log") from None
    lines = text.splitlines()
    if start > 0 and lines:
        lines = lines[1:]  # the first line is probably cut in half

    def rank(line: str) -> int:
        for i in range(len(_LOG_LEVELS) - 1, -1, -1):
            if _LOG_LEVELS[i] in line:
                return i
        return 3 if line.startswith(("Traceback", "  File ", "    ")) else 1

    keep = [ln for ln in lines if (level is None or rank(ln) >= min_rank) and (contains is None or contains in ln)]
    out = [ln if len(ln) <= MAX_LOG_LINE_CHARS else ln[:MAX_LOG_LINE_CHARS] + " [...]" for ln in keep[-limit:]]
    while sum(len(ln) for ln in out) > MAX_LOG_CHARS:
        out.pop(0)
    note = ""
    if len(keep) > len(out):
        note = (f"{len(keep) - len(out)} earlier matching lines left out (answers stay under {MAX_LOG_CHARS} "
                f"characters); filter by level or contains to see specific lines")
    elif not keep:
        note = "the log is empty" if not lines else "no line matches the filter"
    if start > 0:
        note += ("; " if note else "") + f"only the last {_LOG_SCAN_BYTES // (1024 * 1024)} MiB of the log were scanned"
    return LogTail(run_id=run_dir.name, lines=out, matched_lines_scanned=len(keep), log_bytes=size,
                   scanned_bytes=size - start, note=note)


# -- checkpoints ---------------------------------------------------------------------------------
class CheckpointInfo(BaseModel):
    name: str
    file: str
    file_present: bool
    bytes: int | None = None
    env_steps: int
    iteration: int
    wall_seconds: float
    eval_return_mean: float | None = None
    created_at: str


class CheckpointList(BaseModel):
    run_id: str
    checkpoints: list[CheckpointInfo] = Field(description="ordered by env_steps")
    note: str = ""


def list_checkpoints(run_dir: Path) -> CheckpointList:
    """Checkpoint metadata of a run (readable without torch), with whether each weights file exists."""
    out = []
    for m in rf.read_checkpoint_metas(run_dir):
        p = run_dir / rf.CHECKPOINTS_DIR / m.file
        present = p.is_file() and _inside(run_dir, p)
        out.append(CheckpointInfo(name=m.name, file=m.file, file_present=present,
                                  bytes=p.stat().st_size if present else None, env_steps=m.env_steps,
                                  iteration=m.iteration, wall_seconds=m.wall_seconds,
                                  eval_return_mean=m.eval_return_mean, created_at=m.created_at))
    note = ""
    if not out:
        note = ("no checkpoints yet: the trainer writes 'best' at the first evaluation that improves and "
                "'last' when the run ends")
    return CheckpointList(run_id=run_dir.name, checkpoints=out, note=note)


# -- comparing runs ------------------------------------------------------------------------------
MAX_COMPARE = 10


class ComparedRun(BaseModel):
    run_id: str
    config_id: str | None
    status: str
    env_steps: int
    wall_seconds: float | None
    best_eval_return: float | None
    final_eval_return: float | None
    solved: bool
    solved_at_env_steps: int | None
    solved_at_wall_seconds: float | None
    problem: str | None = None


class ConfigDifference(BaseModel):
    key: str
    values: dict[str, Any] = Field(description="run_id -> value ('<missing>' if the run has no such key)")


class Comparison(BaseModel):
    runs: list[ComparedRun]
    config_differences: list[ConfigDifference] = Field(description="only keys whose values differ")
    identical_config_keys: int
    first_to_threshold_env_steps: str | None = Field(
        default=None, description="run_id that reached its reward threshold in the fewest env steps"
    )
    first_to_threshold_wall_time: str | None = Field(
        default=None, description="run_id that reached its reward threshold in the least wall time"
    )
    best_eval_return: str | None = Field(default=None, description="run_id with the highest best eval return")
    note: str = ""


def compare_runs(store: RunStore, refs: list[str]) -> Comparison:
    """Config differences and best/final results of 2..10 runs side by side, and who solved first."""
    if not isinstance(refs, list) or not 2 <= len(refs) <= MAX_COMPARE:
        raise ValueError(f"compare between 2 and {MAX_COMPARE} runs, got {len(refs) if isinstance(refs, list) else refs!r}")
    dirs: list[Path] = []
    for ref in refs:
        d = store.resolve(ref)
        if d not in dirs:
            dirs.append(d)
    if len(dirs) < 2:
        raise ValueError(f"{refs} name the same run; pass at least two different runs")
    runs: list[ComparedRun] = []
    configs: dict[str, dict[str, Any]] = {}
    notes = []
    for d in dirs:
        details = run_details(store, d)
        s = details.summary
        runs.append(ComparedRun(
            run_id=s.run_id, config_id=s.config_id, status=s.status, env_steps=s.env_steps,
            wall_seconds=details.wall_seconds, best_eval_return=s.best_eval_return,
            final_eval_return=s.final_eval_return, solved=s.solved, solved_at_env_steps=s.solved_at_env_steps,
            solved_at_wall_seconds=s.solved_at_wall_seconds, problem=s.problem,
        ))
        try:
            configs[d.name] = store.config(d)
        except RunFileError as exc:
            notes.append(str(exc))
    keys = sorted({k for c in configs.values() for k in c})
    diffs = []
    for k in keys:
        vals = {rid: c.get(k, "<missing>") for rid, c in configs.items()}
        if len({repr(v) for v in vals.values()}) > 1:
            diffs.append(ConfigDifference(key=k, values=vals))
    solved = [r for r in runs if r.solved and r.solved_at_env_steps is not None]
    out = Comparison(runs=runs, config_differences=diffs, identical_config_keys=len(keys) - len(diffs))
    if solved:
        out.first_to_threshold_env_steps = min(solved, key=lambda r: r.solved_at_env_steps or 0).run_id
        timed = [r for r in solved if r.solved_at_wall_seconds is not None]
        if timed:
            out.first_to_threshold_wall_time = min(timed, key=lambda r: r.solved_at_wall_seconds or 0.0).run_id
    else:
        notes.append("none of these runs reached its reward threshold")
    scored = [r for r in runs if r.best_eval_return is not None]
    if scored:
        out.best_eval_return = max(scored, key=lambda r: r.best_eval_return or 0.0).run_id
    envs = {r.config_id.split(":")[0] for r in runs if r.config_id}
    if len(envs) > 1:
        notes.append(f"these runs are on different environments ({', '.join(sorted(envs))}); returns are not comparable")
    out.note = "; ".join(notes)
    return out


class BestRun(BaseModel):
    env_id: str
    best: RunSummary | None = Field(description="the fastest solved run (fewest env steps), else the highest best eval")
    ranking: list[RunSummary] = Field(description="up to 5 runs, best first")
    runs_considered: int
    criterion: str
    note: str = ""


def best_run(store: RunStore, env_id: str, algo: str | None = None) -> BestRun:
    """The best run for an environment: solved in the fewest env steps, else the highest best eval return."""
    if not isinstance(env_id, str) or not env_id.strip():
        raise ValueError("env_id must be a Gymnasium id such as 'CartPole-v1'")
    summaries = [summarize_run(store, store.runs_dir / i) for i in store.run_ids()]
    mine = [s for s in summaries if s.env_id == env_id and (algo is None or s.algo == algo)]
    if not mine:
        known = sorted({s.env_id for s in summaries if s.env_id})
        close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return BestRun(env_id=env_id, best=None, ranking=[], runs_considered=0, criterion="none",
                       note=f"no runs for {env_id!r}{' with algo ' + repr(algo) if algo else ''}{hint} "
                            f"Environments with runs: {', '.join(known) or 'none'}.")
    solved = sorted((s for s in mine if s.solved and s.solved_at_env_steps is not None),
                    key=lambda s: (s.solved_at_env_steps or 0, s.solved_at_wall_seconds or 0.0))
    if solved:
        return BestRun(env_id=env_id, best=solved[0], ranking=solved[:5], runs_considered=len(mine),
                       criterion="solved in the fewest env steps (ties: less wall time)")
    scored = sorted((s for s in mine if s.best_eval_return is not None), key=lambda s: -(s.best_eval_return or 0.0))
    return BestRun(env_id=env_id, best=scored[0] if scored else None, ranking=scored[:5], runs_considered=len(mine),
                   criterion="no run solved it; highest best eval return",
                   note="" if scored else "no run has finished an evaluation yet")
