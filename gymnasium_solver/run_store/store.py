"""RunStore: cached, read-only access to the runs folder (thread-safe, never imports torch).

Every file goes through :mod:`.files`; parsed files live in one byte-bounded LRU
(:mod:`.cache`), keyed by run folder and checked against the file's identity on every call.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import yaml
from pydantic import BaseModel, ValidationError

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import MetricsTable, RunInfo, RunStatus
from gymnasium_solver.run_store.cache import ByteLRU
from gymnasium_solver.run_store.files import RunFileError, label, lstat_run_file, read_run_text
from gymnasium_solver.run_store.metrics import MetricsArrays, MetricsFile, as_table, read_metrics
from gymnasium_solver.run_store.refs import list_run_ids, resolve_run_dir

_T = TypeVar("_T")
_MEMO_BYTES = 64 * 1024
PARALLEL_PARSES = 2  # a memoised answer is bounded well under 25k tokens


def _identity(run_dir: Path, name: str, missing: str) -> tuple[int, int, int]:
    st = lstat_run_file(run_dir, name, missing)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class RunStore:
    """Cached, read-only access to the runs folder. Thread-safe; never imports torch.

    ``cache_bytes`` caps the memory of parsed files (default $GSOLVE_CACHE_MB or 128 MB).
    """

    def __init__(self, runs_dir: Path | str | None = None, cache_bytes: int | None = None):
        self.runs_dir: Path = rf.resolve_runs_dir(runs_dir)
        self.cache = ByteLRU(cache_bytes)
        # Parses of different files run side by side, but no more of them than there are cores: a
        # parse holds the file's bytes, arrow's table and the arrays at once (~5x the file), and 50
        # clients opening 20 big runs at once took the server to 4 GB (measured with bench/bench_mcp_load.py).
        self._parse_slots = threading.BoundedSemaphore(max(1, min(PARALLEL_PARSES, os.cpu_count() or 1)))

    def resolve(self, ref: str) -> Path:
        """The folder of run ``ref`` (full id, unique prefix or @last); see :func:`resolve_run_dir`."""
        return resolve_run_dir(ref, self.runs_dir)

    def run_ids(self) -> list[str]:
        """All run folder names, oldest first."""
        return list_run_ids(self.runs_dir)

    def _cached_file(self, run_dir: Path, name: str, missing: str, parse: Callable[[str], Any]) -> Any:
        key = (name, run_dir)
        ident = _identity(run_dir, name, missing)

        def load(previous: tuple[tuple[int, int, int], Any] | None) -> tuple[Any, int]:
            if previous is not None and previous[0] == ident:
                return previous, 0
            return (ident, parse(read_run_text(run_dir, name, missing))), 2 * ident[1] + 512

        return self.cache.load(key, load)[1]

    # -- run.json ---------------------------------------------------------------------------
    def info(self, run_dir: Path) -> RunInfo:
        """Parsed run.json, cached by file identity. RunFileError if missing or malformed. Its run_id is the
        folder's name, the id every command takes: a run folder copied or renamed keeps the old id inside."""

        def parse(text: str) -> RunInfo:
            info = validate(text)
            return info if info.run_id == run_dir.name else info.model_copy(update={"run_id": run_dir.name})

        def validate(text: str) -> RunInfo:
            try:
                return RunInfo.model_validate_json(text)  # pydantic's own JSON parser: half the time of json + validate
            except ValueError:
                pass
            try:  # again the slow way, for the json module's message (it names the line and column)
                return RunInfo.model_validate(json.loads(text))
            except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError
                first = str(exc).splitlines()[0][:300]
                if isinstance(exc, ValidationError):  # its first line only counts the errors: name the fields
                    first = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']} (got {str(e.get('input'))[:40]!r})"
                                      for e in exc.errors()[:3])[:300]
                raise RunFileError(f"{label(run_dir, rf.RUN_JSON)} is malformed and cannot be read ({first}); "
                                   f"the trainer rewrites it atomically, so it was edited or damaged") from None

        missing = "the run folder has no run.json (not a run, or its trainer died before writing it)"
        return self._cached_file(run_dir, rf.RUN_JSON, missing, parse)  # type: ignore[no-any-return]

    def status(self, run_dir: Path) -> RunStatus:
        """The status to report: a 'running' run whose process died or went silent is 'crashed'."""
        return rf.effective_status(self.info(run_dir))

    def env_steps(self, run_dir: Path) -> int:
        """Env steps done: run.json's progress, or the last metrics row's env_steps when that is ahead
        (run.json is rewritten as a heartbeat, so after a SIGKILL it lags the last written row)."""
        done = self.info(run_dir).progress.env_steps
        try:
            last = self.last_value(run_dir, rf.M.ENV_STEPS)
        except RunFileError:
            return done
        return int(last) if last is not None and np.isfinite(last) and last > done else done

    # -- config.yaml ------------------------------------------------------------------------
    def config(self, run_dir: Path) -> dict[str, Any]:
        """Parsed config.yaml (the fully resolved config), cached. RunFileError if missing/malformed."""
        where = label(run_dir, rf.CONFIG_YAML)

        def parse(text: str) -> dict[str, Any]:
            try:
                raw = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                at = f" at line {mark.line + 1}" if mark is not None else ""
                raise RunFileError(f"{where} is malformed: not valid YAML{at}; the trainer writes it once at "
                                   f"start, so it was edited or damaged") from None
            if raw is None:
                raise RunFileError(f"{where} is empty: the trainer writes the resolved config at start, so the run "
                                   f"died before that or the file was emptied; start the run again")
            if not isinstance(raw, dict):
                raise RunFileError(f"{where} is malformed: expected a mapping of config keys, got {type(raw).__name__}")
            return raw

        cfg = self._cached_file(run_dir, rf.CONFIG_YAML, "this run folder has no resolved config", parse)
        return dict(cfg)

    def config_text(self, run_dir: Path) -> str:
        """config.yaml as written, after checking that it parses."""
        self.config(run_dir)
        return read_run_text(run_dir, rf.CONFIG_YAML)

    # -- metrics.csv ------------------------------------------------------------------------
    def _metrics(self, run_dir: Path, names: Collection[str] | None = None) -> MetricsFile:
        """The cached metrics.csv with at least the columns ``names`` converted (None: all)."""

        def load(previous: MetricsFile | None) -> tuple[MetricsFile, int]:
            with self._parse_slots:
                got = read_metrics(run_dir, previous, names)
            return got, got.nbytes

        return self.cache.load((rf.METRICS_CSV, run_dir), load)  # type: ignore[no-any-return]

    def metric_arrays(self, run_dir: Path) -> MetricsArrays:
        """metrics.csv as numpy arrays (every column), cached; a grown file is read only from where
        we stopped. A torn last line (a row still being written) is left for the next call.
        RunFileError if the file is missing or malformed."""
        return self._metrics(run_dir).arrays

    def metric_columns(self, run_dir: Path) -> list[str]:
        """The metrics.csv header."""
        return list(self._metrics(run_dir, ()).columns)

    def metric_rows(self, run_dir: Path) -> int:
        """Complete rows in metrics.csv."""
        return self._metrics(run_dir, ()).rows

    def metric_column(self, run_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
        """One column as ``(values, missing)``. KeyError if absent."""
        return self._metrics(run_dir, (name,)).column(name)

    def prefetch_columns(self, run_dir: Path, names: Collection[str]) -> None:
        """Convert these columns in one read (a column asked for later costs a read of the file)."""
        self._metrics(run_dir, names)

    def metric_missing(self, run_dir: Path, name: str) -> np.ndarray:
        """Rows where column ``name`` is empty ("not measured")."""
        return self.metric_column(run_dir, name)[1]

    def last_value(self, run_dir: Path, name: str) -> float | None:
        """The last measured value of a column (None if never measured)."""
        return self._metrics(run_dir, (name,)).last_value(name)

    def identities(self, run_dir: Path, names: tuple[str, ...]) -> tuple[tuple[int, int, int] | None, ...]:
        """(inode, size, mtime) of each named run file, None where it is absent or not a regular
        file: a cheap key for answers derived from those files (a few lstat calls, no read)."""
        out: list[tuple[int, int, int] | None] = []
        for name in names:
            try:
                out.append(_identity(run_dir, name, ""))
            except RunFileError:
                out.append(None)
        return tuple(out)

    def memo(self, run_dir: Path, key: tuple[Any, ...], compute: Callable[[], _T],
             files: tuple[str, ...] = (rf.METRICS_CSV,)) -> _T:
        """A result derived from this run's ``files``, recomputed only when one of them changed.

        Keyed by the files' identities, not by their parsed contents, so a memoised answer stays
        valid (and cheap) after the parsed file itself was evicted from the cache."""
        full_key = ("memo", run_dir, self.identities(run_dir, files), *key)
        hit = self.cache.get(full_key)
        if hit is None:
            hit = compute()
            size = len(hit.model_dump_json()) if isinstance(hit, BaseModel) else _MEMO_BYTES
            self.cache.put(full_key, hit, size)
        return hit  # type: ignore[no-any-return]

    def metrics(self, run_dir: Path) -> MetricsTable:
        """metrics.csv as a :class:`MetricsTable` (None = not measured); built per call, not cached."""
        return as_table(self.metric_arrays(run_dir))
