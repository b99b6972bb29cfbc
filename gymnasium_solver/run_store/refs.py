"""Resolving run references (a full id, a unique prefix or ``@last``) to folders inside the runs folder.

A reference is a folder *name*, never a path: anything that could resolve outside the runs
folder (separators, ``..``, absolute paths, symlinks out) is refused.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import Any

from gymnasium_solver.contract import run_folder as rf

LAST_REF = "@last"
LIST_RUNS_HINT = "list runs with `gsolve runs` (or the list_runs MCP tool)"


class RunNotFoundError(ValueError):
    """No run matches a reference; the message lists close matches and how to list runs."""


_RUN_FILES = (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV, rf.RUN_LOG)


def list_run_ids(runs_dir: Path | str | None = None) -> list[str]:
    """Names of the run folders in the runs folder, oldest first (run ids sort by creation time).

    Hidden entries, plain files and folders with none of a run's files (``_RUN_FILES``: not runs at all, e.g. a
    --runs-dir one level too high lists the project's own folders) are skipped; an absent runs folder has no runs.
    """
    root = rf.resolve_runs_dir(runs_dir)
    try:
        entries = os.scandir(root)
    except OSError:  # absent, not a folder, unreadable: no runs to list
        return []
    with entries:
        names = []
        for e in entries:
            try:
                ok = not e.name.startswith(".") and e.is_dir() and (not e.is_symlink() or inside(root, Path(e.path)))
            except OSError:
                ok = False
            if ok and _has_run_files(Path(e.path)):
                names.append(e.name)
    names.sort()
    return names


def validate_ref(ref: Any) -> str:
    """``ref`` stripped, or RunNotFoundError if it is not a string that could name a run folder."""
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


def inside(root: Path, candidate: Path) -> bool:
    """True if ``candidate``, with every link resolved, is ``root`` or lies below it."""
    try:
        candidate.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def no_runs(root: Path) -> str:
    """Why a runs folder lists nothing: empty, or not there at all (a mistyped --runs-dir or $GSOLVE_RUNS_DIR)."""
    if root.is_dir():
        try:
            folders = sum(1 for e in os.scandir(root) if not e.name.startswith(".") and e.is_dir())
        except OSError:
            folders = 0
        if folders:
            return (f"the runs folder {root} has no runs: none of its {folders} folders is one (is it the folder that "
                    "holds the runs?)")
        return f"the runs folder {root} has no runs yet"
    what = "is not a folder" if root.exists() else "does not exist"
    return (f"the runs folder {root} {what} (check --runs-dir / ${rf.RUNS_DIR_ENV}; runs go to ./runs "
            "unless they say otherwise)")


def _is_real_folder(path: Path) -> bool:
    """A folder that is not a symlink (symlinked run folders take the listing's checks)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _has_run_files(path: Path) -> bool:
    return any((path / f).exists() for f in _RUN_FILES)  # run.json first: one stat for every real run


def _checked(root: Path, name: str) -> Path:
    path = root / name
    if not inside(root, path):
        raise RunNotFoundError(f"run folder {name!r} points outside the runs folder (a symlink?) and is not read")
    if not _has_run_files(path):
        # Another folder in the runs folder (a --runs-dir one level too high): not a damaged run, none at all.
        raise RunNotFoundError(f"{name!r} in {root} is not a run: it has none of the files gsolve writes into every run "
                               f"folder ({', '.join(_RUN_FILES)}); is --runs-dir the folder that holds the runs? "
                               f"{LIST_RUNS_HINT}")
    return path


def _is_trial(run_dir: Path) -> bool:
    """True if the run is a trial of a fix experiment or a sweep (an unreadable run.json is not)."""
    try:
        info = rf.read_run_info(run_dir)
    except (OSError, ValueError):
        return False
    return rf.trial_of(info) is not None


def _newest_not_trial(root: Path, ids: list[str]) -> str:
    """The newest of ``ids`` that is not a fix / sweep trial (as `gsolve runs` lists them); the newest trial
    when every run is one. After `gsolve fix RUN`, @last is still the run the user started, not a trial."""
    for run_id in reversed(ids):
        if not _is_trial(root / run_id):
            return run_id
    return ids[-1]


def resolve_run_dir(ref: str, runs_dir: Path | str | None = None) -> Path:
    """The folder of the run ``ref`` names: a full id, a unique id prefix, or ``@last``.

    Raises :class:`RunNotFoundError` (a ValueError) for unknown ids (listing close matches),
    ambiguous prefixes (listing the candidates) and anything path-like.
    """
    root = rf.resolve_runs_dir(runs_dir)
    ref = validate_ref(ref)
    if not ref.startswith((".", "@")) and _is_real_folder(root / ref):
        return _checked(root, ref)  # a full id: no need to list the whole runs folder
    ids = list_run_ids(root)
    if ref.lower() == LAST_REF:
        if not ids:
            raise RunNotFoundError(f"@last: {no_runs(root)}; start one with `gsolve train ENV:VARIANT`")
        # Newest by id; folders not named like run ids (hand-made, renamed) only if nothing else.
        real = [i for i in ids if rf.RUN_ID_PATTERN.match(i)] or ids
        return _checked(root, _newest_not_trial(root, real))
    if ref.startswith("@"):
        raise RunNotFoundError(f"unknown run alias {ref!r}; the only alias is @last (the newest run that is not a fix "
                               "or sweep trial)")
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
        raise RunNotFoundError(f"no run {ref!r}: {no_runs(root)}; start one with `gsolve train ENV:VARIANT`")
    # The random suffix is what people mistype most, so compare against whole ids and suffixes.
    close = difflib.get_close_matches(ref, ids, n=5, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise RunNotFoundError(f"no run {ref!r} in {root}{hint}; newest run is {ids[-1]}; {LIST_RUNS_HINT}")
