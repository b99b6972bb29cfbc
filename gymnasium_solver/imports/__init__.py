"""Import runs from other frameworks as read-only runs of our store (``gsolve import``, MCP import_runs).

:mod:`.tb_events` reads TensorBoard event files, :mod:`.sb3_folder` an SB3 / RL Zoo log folder,
:mod:`.tb_runs` an SB3 or CleanRL event folder, :mod:`.sb3_zip` the hyperparameters of an SB3
model zip (never unpickled), :mod:`.mapping` is the one metric-name table and
:mod:`.build` writes the run folder. :func:`import_runs` finds the sources under each path and
imports each once: the same content imported again answers with the run it already is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.imports.build import check_variant, fingerprint, write_run
from gymnasium_solver.imports.files import is_real_folder
from gymnasium_solver.imports.mapping import Framework, algo_mapping, sb3_algo_from_keys
from gymnasium_solver.imports.sb3_folder import is_sb3_folder, read_sb3_folder
from gymnasium_solver.imports.sb3_zip import is_sb3_zip, read_sb3_zip
from gymnasium_solver.imports.source import ImportError_, SourceRun
from gymnasium_solver.imports.tb_events import EventFileError
from gymnasium_solver.imports.tb_runs import is_event_folder, read_tensorboard_folder

__all__ = ["EXPECTED", "MAX_PATHS", "EventFileError", "ImportError_", "ImportResult", "ImportedRun", "find_sources", "import_runs"]

MAX_SOURCES = 50
MAX_PATHS = 20
_SEARCH_DEPTH = 3
EXPECTED = ("an RL Zoo / Stable-Baselines3 log folder (progress.csv, *monitor.csv, evaluations.npz, "
            "<env>/config.yml + args.yml), an SB3 / CleanRL TensorBoard event folder (events.out.tfevents.*) or a "
            "model .zip saved by SB3 (its hyperparameters; nothing in it is unpickled)")


class ImportedRun(BaseModel):
    run_id: str = Field(description="the run's id in our store: use it with get_run_info, diagnose_run, ...")
    outcome: str = Field(description="'imported', or 'already_imported' when this content was imported before")
    source: str = Field(description="the folder read")
    kind: str = Field(description="sb3_log_folder, rl_zoo_folder, sb3_tensorboard, cleanrl_tensorboard or sb3_model_zip")
    config_id: str
    algo: str
    rows: int = Field(description="metrics.csv rows (one per logged env step)")
    metrics: list[str] = Field(description="our metric columns the run has")
    solved: bool
    best_eval_return: float | None = None
    unknown: dict[str, str] = Field(description="fields the source does not record, and what was done instead")


class ImportResult(BaseModel):
    runs: list[ImportedRun]
    note: str = ""


def _is_source(folder: Path) -> bool:
    try:
        return is_sb3_folder(folder) or is_event_folder(folder)
    except OSError:  # unreadable or vanished while we looked: not a source
        return False


def find_sources(path: Path) -> list[Path]:
    """The run folders at or below ``path`` (at most 3 levels down, not inside a run folder), sorted.
    A progress.csv or event file stands for its folder; a .zip is itself a source (an SB3 model).
    ImportError_ when there is none."""
    if not path.exists():
        raise ImportError_(f"{path} does not exist: pass {EXPECTED}")
    if is_sb3_zip(path):  # a model zip is named one by one: a folder search never opens zips
        return [path]
    given = path
    if path.is_file():
        path = path.parent
    found: list[Path] = []
    level = [path]
    for _ in range(_SEARCH_DEPTH + 1):
        nxt: list[Path] = []
        for folder in level:
            if _is_source(folder):
                found.append(folder)
                continue
            try:
                # Never through a link: the search stays inside the folder it was given (issue 26).
                nxt += sorted(p for p in folder.iterdir() if is_real_folder(p) and not p.name.startswith("."))
            except OSError:
                continue
        level = nxt
        if len(found) > MAX_SOURCES:
            break
    if not found:
        what = (f"{given} is a file gsolve does not import (not an SB3 model .zip), and its folder {path} is none of "
                "the folders gsolve can import" if given != path else f"{path} is none of the folders gsolve can import")
        raise ImportError_(f"{what}: expected {EXPECTED}")
    if len(found) > MAX_SOURCES:
        raise ImportError_(f"{path} holds more than {MAX_SOURCES} runs; import its subfolders one at a time")
    return sorted(found)


def read_source(folder: Path, env_id: str | None) -> SourceRun:
    """The SourceRun of one folder, its environment and algorithm settled or ImportError_ saying why not."""
    if is_sb3_zip(folder):
        run = read_sb3_zip(folder, env_id)
    elif is_sb3_folder(folder):
        run = read_sb3_folder(folder)
        if run.env_id is None:
            run.env_id = env_id
    else:
        run = read_tensorboard_folder(folder, env_id)
    if env_id is not None and run.env_id != env_id:
        raise ImportError_(f"{folder} records environment {run.env_id}, not {env_id}: drop --env or fix it")
    if run.env_id is None:
        raise ImportError_(f"cannot tell which environment {folder} trained on (the source does not record it): "
                           "pass it, e.g. --env CartPole-v1 (MCP: env_id)")
    if ":" in run.env_id:  # Gymnasium imports the module of a "module:EnvId" id: an import never runs code
        raise ImportError_(f"{folder}'s environment {run.env_id!r} names a Python module for Gymnasium to import "
                           "('module:EnvId'), and an import never imports code; use the registered id alone "
                           f"({run.env_id.rsplit(':', 1)[-1]!r}) in the source's files or in --env")
    if run.algo is None and run.framework == Framework.SB3:
        run.algo = sb3_algo_from_keys(set(run.metric_map))
        if run.algo is not None:
            run.unknown["algo"] = f"the source does not name its algorithm; {run.algo} is inferred from the keys it logged"
    if run.algo is None:
        run.algo = "unknown"
        run.unknown["algo"] = "the source does not name its algorithm"
    apply_algo_mappings(run)
    return run


def apply_algo_mappings(run: SourceRun) -> None:
    """Rename the metrics whose meaning depends on the algorithm (SB3 DQN's train/loss is its TD
    loss) now that the algorithm is known; for other algorithms they keep their prefixed names."""
    for source_name, kept in list(run.metric_map.items()):
        m = algo_mapping(run.framework, source_name, run.algo)
        if m is not None and kept in run.series and m.ours not in run.series:
            run.series[m.ours] = run.series.pop(kept)
            run.metric_map[source_name] = m.ours


def _existing(runs_dir: Path) -> dict[str, rf.RunInfo]:
    """Imported runs already in the store, by source fingerprint."""
    from gymnasium_solver.run_store import RunFileError, RunStore

    store = RunStore(runs_dir)
    out: dict[str, rf.RunInfo] = {}
    for rid in store.run_ids():
        try:
            info = store.info(runs_dir / rid)
        except (RunFileError, OSError):
            continue
        if info.source is not None:
            out[info.source.fingerprint] = info
    return out


def _summary(info: rf.RunInfo, outcome: str) -> ImportedRun:
    src = info.source
    assert src is not None
    return ImportedRun(run_id=info.run_id, outcome=outcome, source=src.path, kind=src.kind, config_id=info.config_id,
                       algo=info.algo, rows=info.progress.iteration,
                       metrics=[c for c in info.metric_columns if c not in (rf.M.ITERATION, rf.M.ENV_STEPS)],
                       solved=info.solved, best_eval_return=None if info.best_eval is None else info.best_eval.return_mean,
                       unknown=src.unknown)


def import_runs(paths: Sequence[str | Path], runs_dir: str | Path | None = None, name: str | None = None,
                env_id: str | None = None) -> ImportResult:
    """Import every run found under ``paths`` into the runs folder as read-only runs.

    ``name`` labels them (config_id ENV:NAME; default ``<framework>-<algo>``, e.g. zoo-dqn);
    ``env_id`` is needed only when a source does not record its environment (SB3 event folders).
    Content imported before is not imported twice: its existing run is returned. Raises
    ImportError_ / EventFileError (ValueErrors) with a sentence for anything that cannot be imported;
    nothing is written unless every source reads.
    """
    if not paths:
        raise ImportError_(f"no path given: pass {EXPECTED}")
    if len(paths) > MAX_PATHS:
        raise ImportError_(f"{len(paths)} paths given; import at most {MAX_PATHS} at a time")
    root = rf.resolve_runs_dir(runs_dir)
    folders = list(dict.fromkeys(f for p in paths for f in find_sources(Path(p).expanduser())))
    if len(folders) > MAX_SOURCES:
        raise ImportError_(f"the paths hold {len(folders)} runs, more than {MAX_SOURCES}; import fewer at a time")
    runs = [read_source(f, env_id) for f in folders]  # every source reads before anything is written
    existing = _existing(root)
    out: list[ImportedRun] = []
    variants = [name or f"{'zoo' if r.kind == 'rl_zoo_folder' else r.framework.value}-{r.algo}" for r in runs]
    for run, variant in zip(runs, variants, strict=True):
        check_variant(variant, str(run.env_id))
    for run, variant in zip(runs, variants, strict=True):
        digest = fingerprint(run)
        if digest in existing:
            out.append(_summary(existing[digest], "already_imported"))
            continue
        info = write_run(run, root, variant, digest)
        existing[digest] = info
        out.append(_summary(info, "imported"))
    fresh = sum(r.outcome == "imported" for r in out)
    note = f"{fresh} imported, {len(out) - fresh} already imported, into {root}"
    return ImportResult(runs=out, note=note + "; imported runs are read-only (no resume, retry or fix)")
