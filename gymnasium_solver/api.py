"""The Python API for notebooks: :class:`Runs` (a runs folder) and :class:`Run` (one run in it).

A thin layer over :class:`~gymnasium_solver.run_store.RunStore`, the store the CLI and the MCP
server read through: references resolve, and bad ones fail, with the CLI's sentences. pandas,
matplotlib and torch are imported only by the calls that need them (``Run.metrics``,
``Run.plot``, ``Runs.train``)::

    from gymnasium_solver import Runs
    run = Runs().get("@last")
    run.metrics.plot(x="env_steps", y="eval/return_mean")
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium_solver import run_store as rs
from gymnasium_solver.config import (
    Algo,
    Config,
    ConfigError,
    config_from_yaml_text,
    env_modules,
    in_our_names,
    parse_overrides,
    resolve_with_origin,
    split_config_id,
)
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import label

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from gymnasium_solver.diagnostics import Diagnosis
    from gymnasium_solver.jobs.seed_runs import SeedRuns


def _pandas() -> Any:
    """pandas, which only the DataFrame views need (the ``notebook`` extra); ImportError with the pip command."""
    try:
        import pandas
    except ImportError:
        raise ImportError('the DataFrame views (metrics, not_measured, table) need pandas: '
                          'pip install "gymnasium-solver[notebook]"') from None
    return pandas


# Counters that the trainer writes on every row: whole numbers, shown as integers.
_INTEGER_COLUMNS = (rf.M.ITERATION, rf.M.ENV_STEPS)


class Run:
    """One run folder, read through the run store. Every property reads the folder anew (cached
    by file identity), so a running run's ``metrics`` and ``status`` grow as it trains."""

    def __init__(self, store: rs.RunStore, run_dir: Path):
        self._store = store
        self.path = run_dir

    @property
    def id(self) -> str:
        """The run id (its folder name)."""
        return self.path.name

    def __repr__(self) -> str:
        s = self.summary
        what = s.problem or f"{s.config_id}, {s.status}" + (f" ({s.stop_reason})" if s.stop_reason else "")
        return f"Run({self.id!r}: {what})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Run) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def info(self) -> rf.RunInfo:
        """run.json: identity, state, progress, best/last evaluation, failure (:class:`RunInfo`)."""
        return self._store.info(self.path)

    @property
    def status(self) -> rf.RunStatus:
        """The status to believe: a 'running' run whose process died or went silent is 'crashed'."""
        return self._store.status(self.path)

    @property
    def summary(self) -> rs.RunSummary:
        """The one-line summary `gsolve runs` shows (never raises: an unreadable run has ``problem``)."""
        return rs.summarize_run(self._store, self.path)

    @property
    def details(self) -> rs.RunDetails:
        """What `gsolve show` prints: results, key hyperparameters, differences from the preset, files."""
        return rs.run_details(self._store, self.path)

    @property
    def config(self) -> Config:
        """The fully resolved config the run trained with, as the typed :class:`Config`."""
        return config_from_yaml_text(self._store.config_text(self.path), label(self.path, rf.CONFIG_YAML))

    @property
    def metrics(self) -> pd.DataFrame:
        """metrics.csv as a DataFrame: one row per iteration, our column names (``env_steps``,
        ``eval/return_mean``, ... see docs/metrics.md), ``iteration`` and ``env_steps`` as integers,
        every other column float. NaN is a cell the trainer left empty (not measured that
        iteration, e.g. eval columns between evaluations) or a NaN it measured; ``not_measured``
        tells them apart. A copy: changing it changes nothing on disk or in the cache."""
        pd = _pandas()

        arrays = self._store.metric_arrays(self.path)
        frame = pd.DataFrame(arrays.values, columns=list(arrays.columns), copy=True)
        for name in _INTEGER_COLUMNS:
            if name in frame.columns and frame[name].notna().all():
                frame[name] = frame[name].astype("int64")
        return frame

    @property
    def not_measured(self) -> pd.DataFrame:
        """Same shape as ``metrics``: True where metrics.csv's field is empty (not measured)."""
        pd = _pandas()

        arrays = self._store.metric_arrays(self.path)
        return pd.DataFrame(arrays.missing, columns=list(arrays.columns), copy=True)

    @property
    def checkpoints(self) -> rs.CheckpointList:
        """The run's checkpoints (best, last, periodic) with env steps and eval return, oldest first."""
        return rs.list_checkpoints(self.path)

    def log(self, limit: int = 50, level: str | None = None, contains: str | None = None) -> rs.LogTail:
        """The last ``limit`` lines of run.log, optionally only one level or lines containing a text."""
        return rs.tail_log(self.path, limit, level, contains)

    def diagnose(self) -> Diagnosis:
        """Why the run did (not) solve: verdict, trends and ranked findings with config changes
        (the same :class:`Diagnosis` as `gsolve diagnose` and the MCP tool diagnose_run)."""
        from gymnasium_solver.diagnostics import diagnose_run_dir

        return diagnose_run_dir(self._store, self.path)

    def plot(self, metric: str = rf.M.EVAL_RETURN_MEAN, start_env_steps: int | None = None,
             end_env_steps: int | None = None) -> Figure:
        """A matplotlib Figure of ``metric`` against env steps (the threshold dashed for returns);
        an unknown metric names the close matches. A notebook shows the returned figure."""
        from gymnasium_solver.plotting import metric_figure

        return metric_figure(self._store, [self.path], metric, start_env_steps, end_env_steps)


class Runs:
    """A runs folder: ``Runs()`` is the one the CLI uses ($GSOLVE_RUNS_DIR or ./runs), ``Runs(path)``
    another. ``runs.get("@last")`` or ``runs["20261126-0907"]`` (full id or unique prefix) is a
    :class:`Run`; iterating yields every run, newest first."""

    def __init__(self, runs_dir: Path | str | None = None, cache_mb: int | None = None):
        path = rf.resolve_runs_dir(runs_dir)
        if path.exists() and not path.is_dir():
            raise ValueError(f"runs folder {path} is a file, not a folder; pass the folder that holds the run "
                             f"folders (default ${rf.RUNS_DIR_ENV} or ./runs)")
        if cache_mb is not None and cache_mb < 1:
            raise ValueError(f"cache_mb must be at least 1 (megabytes of parsed metrics to keep), got {cache_mb}")
        self.store = rs.RunStore(path, None if cache_mb is None else cache_mb * 1024 * 1024)

    @property
    def runs_dir(self) -> Path:
        return self.store.runs_dir

    def __repr__(self) -> str:
        return f"Runs({str(self.runs_dir)!r}: {len(self)} runs)"

    def __len__(self) -> int:
        return len(self.store.run_ids())

    def __iter__(self) -> Iterator[Run]:
        return (Run(self.store, self.runs_dir / run_id) for run_id in reversed(self.store.run_ids()))

    def get(self, ref: str | Run) -> Run:
        """The run ``ref`` names: a full id, a unique prefix, or ``@last`` (the newest). An unknown,
        ambiguous or path-like reference raises RunNotFoundError (a ValueError) saying what exists."""
        if isinstance(ref, Run):
            ref = ref.id
        return Run(self.store, self.store.resolve(ref))

    __getitem__ = get

    def list(self, env: str | None = None, algo: str | None = None, status: str | None = None,
             solved: bool | None = None, limit: int | None = 20) -> builtins.list[Run]:
        """Runs newest first, filtered like `gsolve runs` (``env="CartPole-v1"``, ``algo="ppo"``,
        ``status="completed"``, ``solved=True``); at most ``limit`` (None: all that match)."""
        algos = [a.value for a in Algo]
        if algo is not None and algo not in algos:
            raise ValueError(f"unknown algo {algo!r}; use one of {', '.join(algos)}")
        if limit is not None:
            rs.check_limit("limit", limit, 10**9)
        found: builtins.list[rs.RunSummary] = []
        cursor = None
        while limit is None or len(found) < limit:
            page_size = rs.MAX_LIST_LIMIT if limit is None else min(limit - len(found), rs.MAX_LIST_LIMIT)
            page = rs.list_runs(self.store, env, algo, status, solved, page_size, cursor)
            found.extend(page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        if not found:
            warnings.warn(page.note, stacklevel=2)  # what the folder does hold, not a silent empty list
        return [Run(self.store, self.runs_dir / s.run_id) for s in found]

    def table(self, env: str | None = None, algo: str | None = None, status: str | None = None,
              solved: bool | None = None, limit: int | None = 20) -> pd.DataFrame:
        """The runs ``list`` returns as a DataFrame, one row per run (the `gsolve runs` columns and
        more), indexed by run id."""
        pd = _pandas()

        rows = [run.summary.model_dump() for run in self.list(env, algo, status, solved, limit)]
        columns = list(rs.RunSummary.model_fields)
        return pd.DataFrame(rows, columns=columns).set_index("run_id")

    def compare(self, *refs: str | Run) -> rs.Comparison:
        """2 to 10 runs side by side: results, the config keys that differ, who solved first
        (the same :class:`Comparison` as `gsolve compare`)."""
        from gymnasium_solver.ops.seed_check import with_vs_preset

        return with_vs_preset(self.store, rs.compare_runs(self.store, [r.id if isinstance(r, Run) else r for r in refs]))

    def best(self, env: str, algo: str | None = None) -> rs.BestRun:
        """An environment's best run, top 5 runs and top 5 configs judged over their seeds (the same
        :class:`BestRun` as `gsolve compare --env` and MCP's compare_runs(env_id=...))."""
        from gymnasium_solver.ops.seed_check import with_vs_preset

        return with_vs_preset(self.store, rs.best_run(self.store, env, algo))

    def plot(self, *refs: str | Run, metric: str = rf.M.EVAL_RETURN_MEAN) -> Figure:
        """A matplotlib Figure of ``metric`` for 1 to 10 runs on shared axes."""
        from gymnasium_solver.plotting import metric_figure

        if not 1 <= len(refs) <= rs.MAX_COMPARE:
            raise ValueError(f"plot 1 to {rs.MAX_COMPARE} runs at once, got {len(refs)}")
        dirs = list(dict.fromkeys(self.get(r).path for r in refs))
        return metric_figure(self.store, dirs, metric)

    def train(self, config_id: str, set: Mapping[str, Any] | Sequence[str] | None = None, *,  # noqa: A002
              seed: int | None = None, run_id: str | None = None, progress: bool = True,
              env_package: Sequence[str] = (), env_class: str | None = None) -> Run:
        """Train ``config_id`` in this process until solved or out of budget, like `gsolve train`: a preset's
        ``"CartPole-v1:ppo"`` (see `gsolve list-envs`), any registered ``"MountainCar-v0:dqn"`` or a bare
        ``"MountainCar-v0"`` (settings from our preset, else the RL Zoo's entry, else defaults); returns the
        run, whatever its ending (a failure is recorded in it: see ``run.info.failure`` and ``run.diagnose()``).

        ``set`` overrides config keys like `--set`: ``{"learning_rate": 1e-3, "clip_range.end": 0.05}``
        or ``["learning_rate=1e-3"]``. ``env_package`` / ``env_class`` are `--env-package PKG` /
        `--env-class MODULE:CLASS`: packages imported to register ids, your own gymnasium.Env registered as
        the config id's environment (recorded in the run, so `gsolve eval` etc. know which flag it needs).
        Interrupting (Ctrl-C, a notebook's stop button) ends the run gracefully as 'stopped'. A bad key or
        value raises ConfigError naming the close match."""
        env_modules.grant_from_flags(env_package, [env_class] if env_class else [])
        if env_class:
            env_modules.bind_class(split_config_id(config_id)[0], env_class)
        overrides = in_our_names(_overrides(set), "set").values  # recorded in our names
        if seed is not None:
            overrides["seed"] = seed
        resolved = resolve_with_origin(config_id, overrides)
        from gymnasium_solver.train.training import train  # torch: only now

        result = train(resolved.config, self.runs_dir, run_id=run_id, show_progress=progress, overrides=overrides,
                       config_origin=resolved.origin)  # where each value came from, as `gsolve train` records
        return Run(self.store, result.run_dir)


    def train_seeds(self, config_id: str, seeds: Sequence[int], set: Mapping[str, Any] | Sequence[str] | None = None,  # noqa: A002
                    *, parallel: int | None = None, progress: bool = True, env_package: Sequence[str] = (),
                    env_class: str | None = None) -> SeedRuns:
        """Train ``config_id`` once per seed, ``parallel`` runs at a time (default: the machine's cores), each a
        `gsolve train` process, and judge it over them, like `gsolve train CONFIG --seeds ...`: the result holds
        every seed's run id, outcome and env steps, and ``env_steps`` the spread (solved k/n, median, interquartile
        mean with its 95% bootstrap interval, fastest, slowest; an unsolved seed at the env steps it trained).
        ``set``, ``env_package`` and ``env_class`` as in :meth:`train`. Interrupting stops the running seeds
        gracefully and starts no more (``stopped`` says so)."""
        from gymnasium_solver.jobs.backend import LocalProcessBackend
        from gymnasium_solver.jobs.seed_runs import check_seeds, train_seeds

        seeds = check_seeds([int(s) for s in seeds])
        env_modules.grant_from_flags(env_package, [env_class] if env_class else [])
        if env_class:
            env_modules.bind_class(split_config_id(config_id)[0], env_class)
        overrides = in_our_names(_overrides(set), "set").values
        if "seed" in overrides:
            raise ConfigError("train_seeds sets each run's seed; give no 'seed' in set")
        cfg = resolve_with_origin(config_id, {**overrides, "seed": seeds[0]}).config  # a bad key fails here, once

        def ended(run: Any, done: int, total: int) -> None:
            if progress:
                print(f"[{done}/{total}] seed {run.seed}: {run.outcome}"
                      + ("" if run.env_steps is None else f" ({run.env_steps:,} env steps)"), flush=True)

        # Processes, not forks: a notebook's process may hold torch's threads already, which a fork must not copy.
        return train_seeds(LocalProcessBackend(self.runs_dir, parallel), self.runs_dir, config_id, overrides, seeds,
                           True, cfg.reward_threshold, ended)


def _overrides(given: Mapping[str, Any] | Sequence[str] | None) -> dict[str, Any]:
    """``set=`` as the nested overrides `--set` makes: dotted keys (``clip_range.end``) nest."""
    if given is None:
        return {}
    if isinstance(given, str):
        return parse_overrides([given])
    if not isinstance(given, Mapping):
        if all(isinstance(pair, str) for pair in given):
            return parse_overrides(list(given))
        raise ConfigError(f"set must be a dict of config keys, e.g. {{'learning_rate': 0.001}}, or a list of "
                          f"'KEY=VALUE' strings, got {given!r}")
    out: dict[str, Any] = {}
    for key, value in given.items():
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"set has the key {key!r}; keys are config key names such as 'learning_rate'")
        *parents, leaf = key.strip().split(".")
        cursor = out
        for part in parents:
            cursor = cursor.setdefault(part, {})
            if not isinstance(cursor, dict):
                raise ConfigError(f"set key {key!r} conflicts with another key setting {part!r}")
        cursor[leaf] = value
    return out
