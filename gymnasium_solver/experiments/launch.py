"""Plan a fix experiment for a run (diagnosis -> candidates -> a pending record), or start one detached.

``plan_experiment`` diagnoses the parent run and writes nothing; ``start_detached`` writes the
pending record and starts ``gsolve fix RUN --experiment-id ID --json`` in its own session (as
``launcher.start_training`` starts a trainer), so a tool call returns an experiment id at once and
the experiment outlives the process that started it.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.config import env_modules
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.diagnostics import diagnose_run_dir
from gymnasium_solver.diagnostics.models import Diagnosis, Severity
from gymnasium_solver.experiments.candidates import (
    DEFAULT_MAX_TRIALS,
    MAX_TRIALS_LIMIT,
    Candidate,
    NoCandidatesError,
    build_candidates,
    yours_first,
)
from gymnasium_solver.experiments.parent import ParentConfig, parent_config, refusal
from gymnasium_solver.experiments.record import (
    BASELINE,
    ExperimentRecord,
    Trial,
    experiments_dir,
    log_name,
    new_experiment_id,
    read_record,
    write_record,
)
from gymnasium_solver.experiments.runner import (
    DEFAULT_HOLDOUT,
    DEFAULT_SEEDS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_SEEDS,
    MAX_TIMEOUT_SECONDS,
)
from gymnasium_solver.launcher import override_pairs, start_coordinator
from gymnasium_solver.run_store import RunStore


def plan_experiment(
    store: RunStore,
    ref: str,
    max_trials: int = DEFAULT_MAX_TRIALS,
    *,
    experiment_id: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    seeds: int = DEFAULT_SEEDS,
    required: int | None = None,
    own: Mapping[str, Any] | None = None,
    caps: Mapping[str, int] | None = None,
    holdout: int = DEFAULT_HOLDOUT,
) -> ExperimentRecord:
    """Diagnose run ``ref`` and turn its candidates into a record of pending trials (not written):
    each candidate on the run's own seed, and the run's unchanged config on ``seeds - 1`` fresh seeds.
    A winner must solve ``required`` of the ``seeds`` seeds (default: all), and then trains on ``holdout`` fresh
    seeds it was not chosen on (reported with the verdict). ``own``: your change set, tried
    first (within ``max_trials``) and judged like every candidate. ``caps``: an MCP server's caps (launcher.CAP_FLAGS)
    no trial may exceed (a candidate past them is listed as refused, and no rung goes past them).

    Raises ValueError (unknown run, a run still training, nothing to try, bad bounds) with what to do instead.
    """
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise ValueError(f"timeout must be between 1 and {MAX_TIMEOUT_SECONDS:g} seconds, got {timeout_seconds:g}")
    if not 1 <= seeds <= MAX_SEEDS:
        raise ValueError(f"seeds must be between 1 and {MAX_SEEDS} (each is a training run per candidate), got {seeds}")
    if not 1 <= max_trials <= MAX_TRIALS_LIMIT:
        raise ValueError(f"max_trials must be between 1 and {MAX_TRIALS_LIMIT} (each trial is a full training run; "
                         f"more is a sweep: gsolve sweep), got {max_trials}")
    if not 0 <= holdout <= MAX_SEEDS:
        raise ValueError(f"holdout must be between 0 and {MAX_SEEDS} (fresh seeds the winner trains on once chosen), "
                         f"got {holdout}")
    required = seeds if required is None else required
    if not 1 <= required <= seeds:
        raise ValueError(f"--require (seeds a winner must solve) must be between 1 and --seeds ({seeds}), got {required}")
    run_dir = store.resolve(ref)
    info = store.info(run_dir)
    rf.refuse_read_only(info, "run a fix experiment (its trials start from the run's preset, which it does not have)")
    if store.status(run_dir) == rf.RunStatus.RUNNING:
        raise ValueError(f"run {info.run_id} is still training; fix it once it has finished "
                         f"(or stop it first: stop_training, or Ctrl-C / SIGTERM to its trainer)")
    if info.reward_threshold is None:  # no trial could solve: every verdict would be not_fixed, after training them all
        raise ValueError(f"run {info.run_id} has no reward threshold, so no trial could solve and a fix cannot be "
                         f"judged: train it with one (--set reward_threshold=R, the return you call solved), then "
                         f"fix that run")
    if info.solved:
        raise ValueError(f"run {info.run_id} already solved {info.config_id}; there is nothing to fix "
                         f"(to tune it, start runs with your own changes: gsolve retry {info.run_id} --set key=value)")
    parent = parent_config(run_dir, info)  # the run's config as recorded, even if its preset changed since
    diagnosis = diagnose_run_dir(store, run_dir)
    try:
        planned = build_candidates(diagnosis, parent.overrides, MAX_TRIALS_LIMIT)
    except NoCandidatesError:
        if not own:
            raise
        planned = []  # the diagnosis has nothing to add: your change is judged alone, beside your config
    if own:
        mine = dict(own)
        if (why := refusal(info.config_id, parent, mine, caps)) is not None:
            raise ValueError(f"your change ({' '.join(override_pairs(mine))}) cannot train: {why}")
        recorded = store.config(run_dir)  # the run's whole config as it trained
        if all(k in recorded and recorded[k] == v for k, v in mine.items()):
            raise ValueError(f"your change ({' '.join(override_pairs(mine))}) is run {info.run_id}'s config already: "
                             f"nothing to judge; give a value it does not have")
        planned = yours_first(mine, planned)
    candidates, refused = trainable(info.config_id, parent, planned, caps)
    if not candidates:
        raise NoCandidatesError(f"nothing to try for run {info.run_id}: the trainer refuses every candidate's config "
                                f"({'; '.join(refused)}); judge your own change over seeds with "
                                f"`gsolve fix {info.run_id} --set key=value`")
    candidates = candidates[:max_trials]
    seed_list = [info.seed + i for i in range(seeds)]  # the run's own seed first, then fresh ones
    baseline_seeds = baseline_seed_list(seed_list)
    now = rf.utc_now_iso()
    return ExperimentRecord(
        experiment_id=experiment_id or new_experiment_id(), parent_run_id=info.run_id, config_id=info.config_id,
        seed=info.seed, parent_overrides=parent.overrides, drifted=parent.drifted, use_zoo=parent.use_zoo, created_at=now, updated_at=now,
        holdout=holdout,
        host=socket.gethostname(), timeout_seconds=timeout_seconds, seeds=seed_list, required=required,
        baseline_seeds=baseline_seeds, blamed_keys=blamed_keys(diagnosis), candidates=candidates, refused=refused,
        caps=dict(caps or {}),
        trials=first_rung(candidates, seed_list, baseline_seeds),
        message=f"{len(candidates)} candidates planned on seed {info.seed}"
        + (f", your unchanged config on seeds {', '.join(map(str, baseline_seeds))}" if baseline_seeds else "")
        + (f" ({len(refused)} not tried: the trainer refuses their config)" if refused else "")
        + "; starting",
    )


def trainable(config_id: str, parent: ParentConfig, candidates: list[Candidate],
              caps: Mapping[str, int] | None = None) -> tuple[list[Candidate], list[str]]:
    """The candidates whose trial config the trainer accepts (parent.refusal), and a line for each it refuses:
    a candidate that cannot start is not a trial, and one refused config must not end the whole experiment."""
    ok: list[Candidate] = []
    refused: list[str] = []
    for c in candidates:
        why = refusal(config_id, parent, c.changes, caps)
        if why is None:
            ok.append(c)
        else:
            refused.append(f"{c.name} ({' '.join(c.set_args)}): {why}")
    return ok, refused


# 'Unlucky seed' is a verdict of its own: it rests on at least this many fresh seeds of the unchanged
# config (a 2-seed sample calls a config that solves 2 of 3 seeds a fault half the time).
MIN_BASELINE_SEEDS = 3


def baseline_seed_list(seeds: list[int]) -> list[int]:
    """The fresh seeds the unchanged config trains on: the experiment's other seeds (a winner must beat it
    there), then the next ones up to MIN_BASELINE_SEEDS. None with one seed: no baseline."""
    if len(seeds) < 2:
        return []
    return [*seeds[1:], *range(seeds[-1] + 1, seeds[-1] + 1 + max(0, MIN_BASELINE_SEEDS - len(seeds) + 1))]


def first_rung(candidates: list[Candidate], seeds: list[int], baseline_seeds: list[int] | None = None) -> list[Trial]:
    """Every candidate on the parent's seed, interleaved with the unchanged config on the fresh seeds
    (the baseline decides 'unlucky seed' and is worth knowing early)."""
    screen = [Trial(candidate=c.name, changes=c.changes, set_args=c.set_args, seed=seeds[0], role="screen")
              for c in candidates]
    fresh = seeds[1:] if baseline_seeds is None else baseline_seeds
    baseline = [Trial(candidate=BASELINE, changes={}, set_args=[], seed=s, role="baseline") for s in fresh]
    out: list[Trial] = []
    for i in range(max(len(screen), len(baseline))):
        out += screen[i:i + 1] + baseline[i:i + 1]
    return out


# Keys a finding adds beside its cause to keep the run's length and anneal consistent (a longer
# budget with the exploration fraction that keeps the anneal): blamed only when nothing else is.
_BUDGET_COMPANIONS = frozenset({"max_env_steps", "exploration_fraction"})


def blamed_keys(diagnosis: Diagnosis) -> list[str]:
    """The keys the top finding (the first warning or critical with a change) blames: those it would
    change, less a budget it raises beside another change. A top finding that only raises the budget
    blames nothing: more steps work around a slow run, they do not name why it is slow, so a revert
    that solves as fast is not passed over for one (verdict.preferred)."""
    for f in diagnosis.findings:
        if f.severity != Severity.INFO and f.suggested_changes:
            keys = {c.key for c in f.suggested_changes if c.key != "seed"}
            return sorted(keys - _BUDGET_COMPANIONS)
    return []


class ExperimentStart(BaseModel):
    """An experiment started in the background."""

    experiment_id: str
    parent_run_id: str
    config_id: str
    candidates: list[Candidate] = Field(description="what the trials will try, in order")
    pid: int = Field(description="the coordinator process (gsolve fix)")
    log: str = Field(description="the coordinator's output")
    note: str = Field(description="what to call next")


def start_detached(
    store: RunStore,
    ref: str,
    max_trials: int = DEFAULT_MAX_TRIALS,
    *,
    parallel: int | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    seeds: int = DEFAULT_SEEDS,
    required: int | None = None,
    own: Mapping[str, Any] | None = None,
    caps: Mapping[str, int] | None = None,
    holdout: int = DEFAULT_HOLDOUT,
) -> ExperimentStart:
    """Plan the experiment, write its pending record and start its coordinator detached. Returns at once."""
    record = plan_experiment(store, ref, max_trials, timeout_seconds=timeout_seconds, seeds=seeds, required=required,
                             own=own, caps=caps, holdout=holdout)
    runs_dir = store.runs_dir.resolve()
    write_record(runs_dir, record)
    log = experiments_dir(runs_dir) / log_name(record.experiment_id)
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "fix", record.parent_run_id,
           "--experiment-id", record.experiment_id, "--runs-dir", str(runs_dir), "--json",
           "--max-trials", str(max_trials), "--timeout", f"{timeout_seconds:g}", "--seeds", str(seeds),
           "--require", str(record.required), "--holdout", str(record.holdout), *env_modules.granted_flags()]
    if parallel is not None:
        cmd += ["--parallel", str(parallel)]

    def claim(pid: int) -> None:
        if read_record(runs_dir, record.experiment_id).pid is None:
            record.pid, record.host = pid, socket.gethostname()
            write_record(runs_dir, record)

    pid = start_coordinator(cmd, Path(log), claim)
    return ExperimentStart(
        experiment_id=record.experiment_id, parent_run_id=record.parent_run_id, config_id=record.config_id,
        candidates=record.candidates, pid=pid, log=str(log),
        note=f"{len(record.candidates)} candidates on seed {record.seed} and your unchanged config on "
        f"{len(record.baseline_seeds)} fresh seeds started in the background (candidates that solve go on to the fresh "
        f"seeds; at most {timeout_seconds:g}s); call get_fix(experiment_id={record.experiment_id!r}) until "
        f"status is 'done': its verdict (fixed / unlucky_seed / not_fixed), message and winner say how sure it is",
    )
