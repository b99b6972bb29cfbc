"""Bench results files (``bench/results/<name>.json``): what a bench measured and where, written and read here.

A performance figure in README.md or docs/ is rendered from one of these files (bench/render_tables.py),
never typed. Each file holds the command that measured it, the commit, the machine (CPU model, cores),
the library versions and the load average at its start and end, and per preset the rows of each arm
(one row per seed: solved, env steps, wall seconds). ``write_results`` and ``read_results`` share one
test (tests/test_bench_results.py).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from cpu_identity import cpu_model, kernels  # noqa: E402 - scripts/cpu_identity.py, the one reader of /proc/cpuinfo

RESULTS_DIR = ROOT / "bench" / "results"
# The libraries whose versions change a figure; the ones a bench does not import are recorded anyway
# (None when not installed), so two files compare like for like.
LIBRARIES = ("torch", "gymnasium", "numpy", "stable-baselines3", "rl_zoo3")
# Paths whose uncommitted edits change what training does: a figure measured with any of them edited
# says so (Measured.edited), since the commit alone does not reproduce it.
TRAINING_PATHS = ("gymnasium_solver", "config")


class Machine(BaseModel):
    """Where a figure was measured: env steps to solve are exact on one machine, not across machines."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cpu: str
    cores: int
    platform: str
    python: str
    kernels: str | None = Field(default=None, description="the CPU's maker and the kernels torch dispatches to "
                                "(scripts/cpu_identity.kernels: amd-avx2, amd-avx512, intel-avx512): two AMD EPYCs "
                                "with and without AVX512 train some seeds to other env steps; None in a file "
                                "measured before it was kept")

    @property
    def label(self) -> str:
        """The CPU as the docs and messages name it: its model, and its kernels where they are known."""
        return f"{self.cpu} ({self.kernels})" if self.kernels else self.cpu


class Measured(BaseModel):
    """When, where and on what code a results file was measured."""

    model_config = ConfigDict(extra="forbid")
    command: str
    commit: str
    edited: list[str] = Field(default_factory=list, description="training code edited, uncommitted, at the time")
    date: str
    machine: Machine
    versions: dict[str, str | None]
    load_start: float
    load_end: float
    wall_s: float | None = Field(default=None, description="the whole command's wall time, where a figure quotes it")


class Row(BaseModel):
    """One training run of one arm on one seed."""

    model_config = ConfigDict(extra="forbid")
    seed: int
    solved: bool
    env_steps: int
    wall_s: float
    process_s: float | None = Field(default=None, description="the whole subprocess, imports included (bench_any_env)")
    source: str | None = Field(default=None, description="where the arm's settings came from (bench_any_env)")


class PresetRows(BaseModel):
    """One preset's rows per arm ("ours", and "zoo" where the bench ran the RL Zoo's settings)."""

    model_config = ConfigDict(extra="forbid")
    arms: dict[str, list[Row]]
    budget: int | None = Field(default=None, description="our preset's max_env_steps: an unsolved seed counts as it")
    config_sha: str | None = Field(default=None, description="hash of our resolved config when measured")
    config: dict[str, Any] | None = Field(default=None, description="our resolved config when measured, every key "
                                          "(bench_presets_vs_zoo.py since 2026-12-05): tells a changed value from a "
                                          "setting the config model gained at its default")
    threshold: float | None = Field(default=None, description="the solve threshold both arms were held to")
    threshold_note: str | None = Field(default=None, description="where the threshold came from when not the env's spec")
    settings: str | None = Field(default=None, description="where our settings came from (bench_any_env: zoo or default)")
    parts: dict[str, list[float]] = Field(default_factory=dict, description="named figures, one per repeat, of a "
                                          "bench that splits a run's time (bench_loop_limit.py: seconds by part)")


class Results(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    measured: Measured
    presets: dict[str, PresetRows]


def machine() -> Machine:
    cpu = cpu_model() or platform.processor() or platform.machine()
    return Machine(cpu=cpu, cores=os.cpu_count() or 1, platform=platform.system().lower(),
                   python=platform.python_version(), kernels=kernels())


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for lib in LIBRARIES:
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            out[lib] = None
    return out


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def start_measuring(argv: list[str] | None = None) -> Measured:
    """The record of a measurement starting now (call ``finish`` at its end for the closing load)."""
    args = sys.argv if argv is None else argv
    script = Path(args[0])
    script_arg = str(script.relative_to(ROOT)) if script.is_absolute() and script.is_relative_to(ROOT) else args[0]
    edited = _git("diff", "--name-only", "HEAD", "--", *TRAINING_PATHS).splitlines()
    return Measured(command=shlex.join([".venv/bin/python", script_arg, *args[1:]]),
                    commit=_git("rev-parse", "--short=7", "HEAD") or "unknown", edited=edited,
                    date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                    machine=machine(), versions=versions(), load_start=round(os.getloadavg()[0], 2),
                    load_end=round(os.getloadavg()[0], 2))


def finish(measured: Measured, wall_s: float | None = None) -> Measured:
    return measured.model_copy(update={"load_end": round(os.getloadavg()[0], 2),
                                       "wall_s": None if wall_s is None else round(wall_s, 1)})


def results_path(name: str, directory: Path = RESULTS_DIR) -> Path:
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a results name is letters, digits, '-' and '_': {name!r}")
    return directory / f"{name}.json"


def write_results(results: Results, directory: Path = RESULTS_DIR) -> Path:
    """Write (replace) ``<directory>/<name>.json``; it is read back before it replaces the old file."""
    path = results_path(results.name, directory)
    text = results.model_dump_json(indent=1) + "\n"
    Results.model_validate_json(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def read_results(name: str, directory: Path = RESULTS_DIR) -> Results:
    path = results_path(name, directory)
    try:
        return Results.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"results file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise SystemExit(f"results file {path} is not a results file: {str(exc).splitlines()[0]}") from exc


def all_results(directory: Path = RESULTS_DIR) -> dict[str, Results]:
    return {p.stem: read_results(p.stem, directory) for p in sorted(directory.glob("*.json"))}


class Spread(BaseModel):
    """Env steps to solve over seeds: an unsolved seed counts as the budget (or as what it spent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    seeds: list[int]
    solved: int
    median_env_steps: float
    slowest_env_steps: int
    slowest_seed: int
    median_wall_s: float
    slowest_wall_s: float
    lower_bound: bool = Field(description="some seed did not solve: medians are at least these")


def spread(rows: list[Row]) -> Spread:
    if not rows:
        raise ValueError("no rows")
    slowest = max(rows, key=lambda r: (not r.solved, r.env_steps))
    return Spread(seeds=[r.seed for r in rows], solved=sum(r.solved for r in rows),
                  median_env_steps=statistics.median(r.env_steps for r in rows),
                  slowest_env_steps=slowest.env_steps, slowest_seed=slowest.seed,
                  median_wall_s=statistics.median(r.wall_s for r in rows),
                  slowest_wall_s=max(r.wall_s for r in rows), lower_bound=not all(r.solved for r in rows))


def resolved_config(config_id: str) -> dict[str, Any]:
    """The preset as resolved now, every key, as JSON would store it."""
    from gymnasium_solver.config import resolve_config

    return json.loads(json.dumps(resolve_config(config_id, []).model_dump(mode="json"), default=str))


def config_sha(config_id: str) -> str:
    """A short hash of the preset as resolved now (every key), to tell a changed preset from other drift."""
    import hashlib

    dumped = json.dumps(resolved_config(config_id), sort_keys=True, default=str)
    return hashlib.sha256(dumped.encode()).hexdigest()[:12]


def same_as_today(rows: PresetRows, config_id: str) -> bool:
    """Whether the rows measured the preset as it resolves now. With the recorded config: every recorded value is
    today's, and a key it lacks is one the config model gained since, at its default. Without it (files written
    before the config was kept): the hash, which a key added at its default changes too."""
    if rows.config is None:
        return rows.config_sha is not None and rows.config_sha == config_sha(config_id)
    from gymnasium_solver.config import resolve_config

    model = type(resolve_config(config_id, []))
    now = resolved_config(config_id)
    defaults = {key: json.loads(json.dumps(field.get_default(call_default_factory=True), default=str))
                for key, field in model.model_fields.items()}
    return (all(key in now and now[key] == value for key, value in rows.config.items())
            and all(key in defaults and defaults[key] == value for key, value in now.items() if key not in rows.config))
