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
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

from gymnasium_solver import run_folder as rf
from gymnasium_solver.run_folder import MetricsTable, RunInfo, RunStatus

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
        names = [e.name for e in entries if not e.name.startswith(".") and e.is_dir()]
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
        return _checked(root, ids[-1])
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
# Metrics parsing (bulk, numpy)
# ---------------------------------------------------------------------------------------------
# Empty CSV fields ("not measured this iteration") are rewritten to this number before the bulk
# numeric parse and turned back into a mask afterwards. No metric the trainer writes comes near it.
_MISSING_SENTINEL = -7.31e307
_SENTINEL_BYTES = b"-7.31e307"


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

    def index(self, name: str) -> int:
        return self.columns.index(name)


def _fill_empty_fields(body: bytes) -> bytes:
    if b",," in body:
        # Two passes: replace() does not overlap matches, so ",,," needs a second look.
        body = body.replace(b",,", b"," + _SENTINEL_BYTES + b",").replace(b",,", b"," + _SENTINEL_BYTES + b",")
    if b",\n" in body:
        body = body.replace(b",\n", b"," + _SENTINEL_BYTES + b"\n")
    if b"\n," in body:
        body = body.replace(b"\n,", b"\n" + _SENTINEL_BYTES + b",")
    if body.startswith(b","):
        body = _SENTINEL_BYTES + body
    return body


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


def parse_metrics_rows(body: bytes, ncols: int, first_lineno: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Parse complete CSV rows (every line ends in a newline) into ``(values, missing)`` arrays.

    Raises ValueError naming the first malformed line.
    """
    if not body:
        return np.empty((0, ncols)), np.empty((0, ncols), dtype=bool)
    nrows = body.count(b"\n")
    if body.count(b",") != nrows * (ncols - 1):
        raise ValueError(_locate_bad_line(body, ncols, first_lineno))
    filled = _fill_empty_fields(body).replace(b"\n", b",")
    import warnings

    with warnings.catch_warnings():
        # fromstring warns (and stops) at text it cannot parse; we detect that by the count.
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            flat = np.fromstring(filled.decode("ascii", errors="replace"), dtype=np.float64, sep=",")
        except ValueError:
            flat = np.empty(0)
    if flat.size != nrows * ncols:
        raise ValueError(_locate_bad_line(body, ncols, first_lineno))
    values = flat.reshape(nrows, ncols)
    missing = values == _MISSING_SENTINEL
    if missing.any():
        values[missing] = np.nan
    return values, missing


@dataclass
class _MetricsCache:
    ino: int
    size: int
    mtime_ns: int
    offset: int  # bytes consumed (header + complete rows)
    lines: int  # lines consumed, for error messages
    columns: list[str]
    chunks: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    arrays: MetricsArrays | None = None
    table: MetricsTable | None = None

    def consolidated(self) -> MetricsArrays:
        if self.arrays is None:
            if len(self.chunks) == 1:
                values, missing = self.chunks[0]
            elif self.chunks:
                values = np.concatenate([c[0] for c in self.chunks])
                missing = np.concatenate([c[1] for c in self.chunks])
            else:
                values = np.empty((0, len(self.columns)))
                missing = np.empty((0, len(self.columns)), dtype=bool)
            self.chunks = [(values, missing)]
            self.arrays = MetricsArrays(self.columns, values, missing)
        return self.arrays


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
        """metrics.csv as numpy arrays, cached; a grown file is read only from where we stopped.

        A torn last line (a row still being written) is left for the next call. RunFileError if
        the file is missing or malformed.
        """
        with self._lock:
            return self._read_metrics(run_dir).consolidated()

    def metrics(self, run_dir: Path) -> MetricsTable:
        """metrics.csv as a :class:`MetricsTable` (None = not measured), cached like metric_arrays."""
        with self._lock:
            cache = self._read_metrics(run_dir)
            if cache.table is None:
                arrays = cache.consolidated()
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
                if st.st_size == cache.size and st.st_mtime_ns == cache.mtime_ns:
                    return cache
                f.seek(cache.offset)
                self._consume(cache, f.read(), path)
                cache.size, cache.mtime_ns = st.st_size, st.st_mtime_ns
                return cache
            data = f.read()
        cache = self._parse_header(path, data, st)
        self._consume(cache, data[cache.offset :], path)
        self._metrics[run_dir] = cache
        return cache

    @staticmethod
    def _parse_header(path: Path, data: bytes, st: os.stat_result) -> _MetricsCache:
        end = data.find(b"\n")
        if end < 0:
            # Header not complete yet (run just started): no columns, read it again next time.
            return _MetricsCache(st.st_ino, st.st_size, st.st_mtime_ns, 0, 0, [])
        try:
            columns = data[:end].decode("utf-8").strip().split(",")
        except UnicodeDecodeError:
            raise RunFileError(f"{path} is malformed: its header is not UTF-8 text") from None
        if not columns or any(not c for c in columns):
            raise RunFileError(f"{path} is malformed: empty column name in header {data[:end][:200]!r}")
        return _MetricsCache(st.st_ino, st.st_size, st.st_mtime_ns, end + 1, 1, columns)

    @staticmethod
    def _consume(cache: _MetricsCache, data: bytes, path: Path) -> None:
        if not cache.columns:
            return  # header still torn; the next call re-reads from the start
        end = data.rfind(b"\n") + 1  # drop a torn last line; it is read once it is complete
        if end == 0:
            return
        try:
            values, missing = parse_metrics_rows(data[:end], len(cache.columns), cache.lines + 1)
        except ValueError as exc:
            raise RunFileError(f"{path} is malformed: {exc}") from None
        cache.offset += end
        cache.lines += values.shape[0]
        if values.shape[0]:
            cache.chunks.append((values, missing))
            cache.arrays = None
            cache.table = None
