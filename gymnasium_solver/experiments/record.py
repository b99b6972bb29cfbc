"""The experiment record: ``runs/.experiments/<experiment_id>.json``, its schema, writer and reader.

One JSON file per experiment, rewritten atomically by the coordinator whenever a trial starts or
finishes, so any process (``gsolve fix --json``, the MCP tool ``get_fix``) can read it at
any time. The folder is hidden (its name starts with a dot), so run listings never see it.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments.candidates import Candidate
from gymnasium_solver.jobs.record import JobKind, JobStatus, coordinator_gone, log_note

EXPERIMENTS_DIR = ".experiments"
KIND = JobKind(noun="experiment", folder=EXPERIMENTS_DIR, pattern=r"^fix-[0-9]{8}-[0-9]{6}-[0-9a-f]{4,}$",
               example="fix-20261125-221900-3fa9", start_hint="fix_run / gsolve fix")

TrialOutcome = Literal["pending", "running", "solved", "not_solved", "stopped_early", "failed", "skipped"]
TrialRole = Literal["screen", "confirm", "baseline", "combine", "extend", "explore", "widen", "trim", "recheck",
                    "holdout"]
Verdict = Literal["running", "fixed", "unlucky_seed", "not_fixed"]
ExperimentStatus = JobStatus
BASELINE = "your config (unchanged)"


class Trial(BaseModel):
    """One trial run: one candidate (or the parent's own config) on one seed."""

    candidate: str = Field(description="the candidate's name, or 'your config (unchanged)' for a baseline trial")
    seed: int | None = Field(default=None, description="the seed it trained on (None: a record from before seeds)")
    role: TrialRole = Field(default="screen", description="its rung (experiments/runner.py): screen: the parent's "
                            "seed; confirm: the fresh seeds; baseline: your unchanged config; combine: the blamed "
                            "key's fix plus a change around it; extend: a longer budget; explore: an entropy bonus or "
                            "more envs; widen: a near miss on more seeds; trim: the winner less one change; recheck: "
                            "the winner on more seeds; holdout: the winner on seeds that did not choose it")
    changes: dict[str, Any] = Field(description="the candidate's config changes over the parent's overrides")
    set_args: list[str] = Field(description="the changes as --set arguments")
    run_id: str | None = Field(default=None, description="the trial's run folder (None until started)")
    outcome: TrialOutcome = "pending"
    detail: str = Field(default="", description="why it ended, e.g. 'stopped: cannot beat trial 1 (solved at 12288)'")
    env_steps: int = Field(default=0, description="env steps the trial ran")
    solved_at_env_steps: int | None = Field(default=None, description="env steps to solve (None unless solved)")
    seconds: float | None = Field(
        default=None, description="trainer seconds to solve when solved, else the trainer seconds it ran")
    best_eval: float | None = Field(default=None, description="best evaluation return")


class SeedOutcome(BaseModel):
    """One arm on one seed."""

    seed: int
    solved: bool
    env_steps: int = Field(description="env steps to solve; unsolved: every env step it ran")
    run_id: str | None = Field(description="the trial run (the parent run itself for the baseline's own seed)")


class ArmResult(BaseModel):
    """How one change set did on every seed it ran (an arm: a candidate, a trimmed winner, or the
    parent's unchanged config)."""

    name: str
    changes: dict[str, Any]
    set_args: list[str]
    per_seed: list[SeedOutcome] = Field(description="by seed, in the experiment's seed order")
    solved: int = Field(description="seeds solved")
    ran: int = Field(description="seeds with a finished trial")
    median_env_steps: float | None = Field(default=None, description="over the solved seeds")
    max_env_steps: int | None = Field(default=None, description="the slowest solved seed: the spread's top")


class Winner(BaseModel):
    """The smallest change set that solved on every seed (or the stated k of n), fewest env steps first."""

    candidate: str
    run_id: str = Field(description="its trial run on the parent's own seed")
    solved_at_env_steps: int = Field(description="env steps to solve on the parent's own seed")
    seconds: float | None
    changes: dict[str, Any]
    set_args: list[str] = Field(description="the winning changes as --set arguments")
    command: str = Field(description="`gsolve train ...` that reproduces the winning trial (parent's overrides included)")
    seeds_solved: int = Field(default=1, description="seeds it solved")
    seeds: int = Field(default=1, description="seeds it ran")
    median_env_steps: float | None = Field(default=None, description="median env steps to solve over its seeds")
    max_env_steps: int | None = Field(default=None, description="its slowest seed's env steps to solve")
    dropped: list[str] = Field(default_factory=list, description="changes of the candidate it came from that were "
                               "verified unnecessary (the rest still solves on every seed without them)")
    keeps_blamed: list[str] = Field(default_factory=list, description="keys the top finding blames that the winner "
                                    "never changed: it works around the finding, or the finding is wrong (a "
                                    "blamed key the trim verified unneeded is in dropped instead)")
    holdout: ArmResult | None = Field(default=None, description="the winner on holdout_seeds, which did not choose "
                                      "it (None: not run)")


class ExperimentRecord(BaseModel):
    """The state of one fix experiment: its candidates, their trials and the winner."""

    experiment_id: str
    kind: Literal["fix"] = "fix"
    parent_run_id: str
    config_id: str
    seed: int
    parent_overrides: dict[str, Any] = Field(description="the parent's config as overrides: its own, plus the "
                                             "keys its preset has changed since (experiments/parent.py)")
    drifted: list[str] = Field(default_factory=list, description="keys of parent_overrides the parent did not set, "
                               "which its preset changed since; a pure revert drops them")
    use_zoo: bool = Field(default=True, description="false: the parent took gsolve's defaults where the RL Zoo has "
                          "an entry (--no-zoo), and so does every trial")
    status: ExperimentStatus = "running"
    created_at: str
    updated_at: str
    finished_at: str | None = None
    pid: int | None = Field(default=None, description="the coordinator process (gsolve fix)")
    host: str | None = None
    parallel: int = Field(default=1, description="trials run at once")
    timeout_seconds: float
    seeds: list[int] = Field(default_factory=list, description="the seeds every verdict is taken on: the "
                             "parent's own first, then fresh ones")
    required: int = Field(default=1, description="seeds a winner must solve (of len(seeds))")
    baseline_seeds: list[int] = Field(default_factory=list, description="the fresh seeds your unchanged config "
                                      "trains on, at least three (empty in a record from before: seeds[1:])")
    recheck_seeds: list[int] = Field(default_factory=list, description="more fresh seeds (in baseline_seeds too) "
                                     "the unchanged config and winner train on before 'unlucky seed'")
    widened_seeds: list[int] = Field(default_factory=list, description="seeds the widen rung added for a near miss "
                                     "(one more may fail)")
    holdout: int = Field(default=0, description="fresh seeds the winner trains on once chosen (0: none)")
    holdout_seeds: list[int] = Field(default_factory=list, description="those seeds, after all the others")
    blamed_keys: list[str] = Field(default_factory=list, description="the keys the top finding's change sets")
    candidates: list[Candidate]
    refused: list[str] = Field(default_factory=list, description="candidates not tried, the trainer refusing their "
                               "config, each with why")
    trials: list[Trial]
    caps: dict[str, int] = Field(default_factory=dict, description="an MCP server's caps (max_env_steps, n_envs) no "
                                 "trial may exceed")
    extended: str | None = Field(default=None, description="the arm the extend rung retried with a longer budget "
                                 "(it solved some seeds, not the required ones)")
    arms: list[ArmResult] = Field(default_factory=list, description="every arm's per-seed outcomes, "
                                  "the parent's unchanged config first")
    verdict: Verdict = Field(default="running", description="fixed: a change solves the required seeds and beats "
                             "your config there; unlucky_seed: your unchanged config solves every fresh seed (or "
                             "most, and no change beats it); not_fixed: neither")
    winner: Winner | None = None
    message: str = Field(default="", description="how the experiment ended (with the numbers), or what it is doing")


def experiments_dir(runs_dir: Path) -> Path:
    return Path(runs_dir) / EXPERIMENTS_DIR


def new_experiment_id(now: datetime | None = None) -> str:
    """Sortable and unique, e.g. ``fix-20261125-221900-3fa9``."""
    now = now or datetime.now(UTC)
    return f"fix-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def record_path(runs_dir: Path, experiment_id: str) -> Path:
    return KIND.path(runs_dir, experiment_id)


def write_record(runs_dir: Path, record: ExperimentRecord) -> None:
    record.updated_at = rf.utc_now_iso()
    KIND.write(runs_dir, record.experiment_id, record)


def list_experiment_ids(runs_dir: Path) -> list[str]:
    """Experiment ids in the runs folder, oldest first."""
    return KIND.list_ids(runs_dir)


def read_record(runs_dir: Path, experiment_id: str) -> ExperimentRecord:
    """The record of ``experiment_id`` (or a unique prefix), with a dead coordinator reported as crashed.

    Raises ValueError naming close matches for an unknown id.
    """
    return _effective(KIND.read(runs_dir, experiment_id, ExperimentRecord), runs_dir)


def log_name(experiment_id: str) -> str:
    """The coordinator's output (a detached one's: `gsolve fix --experiment-id`'s stdout and stderr), in experiments_dir."""
    return f"{experiment_id}.log"


def _effective(record: ExperimentRecord, runs_dir: Path) -> ExperimentRecord:
    """A 'running' record whose coordinator is gone is 'crashed', and so are its running trials: their
    trainers got SIGTERM when it died (jobs.backend.die_with) and recorded their own stop."""
    why = coordinator_gone(record.status, record.pid, record.host, record.updated_at)
    if why is None:
        return record
    trials = [t.model_copy(update={"outcome": "stopped_early", "detail": f"stopped: {why}"})
              if t.outcome == "running" else t for t in record.trials]
    log = log_note(runs_dir, EXPERIMENTS_DIR, log_name(record.experiment_id))
    return record.model_copy(update={"status": "crashed", "trials": trials,
                                     "message": f"crashed: {why} before it finished{log}; its trials' run folders "
                                     f"hold what was done"})
