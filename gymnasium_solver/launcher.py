"""Start, stop and wait for training processes, without importing torch.

``start_training`` validates the config, pre-creates the run folder with a placeholder run.json
and starts ``gsolve train ... --run-id ID`` as a detached process (its own session, output
appended to the run's run.log) so the run outlives the MCP server that started it.
``start_trainer`` is the same start for callers that keep the process (the experiment runner's
local backend); ``spawn_detached`` starts any ``gsolve`` command that way (``gsolve fix``).
``stop_training`` and ``wait_for_training`` (get_run_info's wait) are async and only ever sleep with ``anyio.sleep``:
a stop or a wait never blocks the server's event loop.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import anyio
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.config import env_modules
from gymnasium_solver.config.presets import override_pairs, yaml_value  # noqa: F401 - re-exported: --set arguments
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import RunStore, TrainingStatus, training_status
from gymnasium_solver.train import run_writer
from gymnasium_solver.train.tracking import check_tracking_available

MAX_WAIT_SECONDS = 60.0
MAX_STOP_TIMEOUT = 120.0
_POLL_SECONDS = 0.25


class StartResult(BaseModel):
    run_id: str
    config_id: str
    pid: int
    run_dir: str
    max_env_steps: int
    reward_threshold: float | None
    overrides: dict[str, Any]
    settings_from: str | None = Field(default=None, description="where the settings came from: our preset, the RL "
                                      "Zoo's entry or gsolve's defaults (get_config shows each value's source)")
    config_notes: list[str] = Field(default_factory=list, description="what the resolution chose or could not "
                                    "reproduce, e.g. the algorithm picked from the spaces, no reward threshold")
    note: str = Field(description="what to call next")


_override_pairs = override_pairs


def zoo_flag(use_zoo: bool) -> list[str]:
    """The `gsolve train` argument that resolves a config id as a run did: ``--no-zoo`` for a run that took
    gsolve's defaults where the RL Zoo has an entry, nothing otherwise."""
    return [] if use_zoo else ["--no-zoo"]


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Wait for ``proc`` in a daemon thread so it never lingers as a zombie of this process."""
    # Without a wait() the exited child stays a zombie of this server until it exits.
    threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()


def spawn_detached(cmd: list[str], log_path: Path,
                   preexec: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own session (it outlives its parent and leads its own process group),
    stdin closed, stdout and stderr appended to ``log_path`` after a line naming the command.
    ``preexec`` runs in the child before ``cmd`` (a trial pool's die-with-the-coordinator hook)."""
    with open(log_path, "ab") as log:
        log.write(f"[launcher] {rf.utc_now_iso()} starting: {' '.join(cmd)}\n".encode())
        log.flush()
        return subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            close_fds=True, preexec_fn=preexec,  # noqa: PLW1509 - only an async-signal-safe prctl
        )


def start_coordinator(cmd: list[str], log_path: Path, claim: Callable[[int], None]) -> int:
    """Start a job's coordinator (``gsolve fix`` / ``gsolve sweep --resume``) detached, reaped, and return its
    pid. ``claim(pid)`` then writes the pid into the job's record unless the coordinator has written its own:
    its pid now, not when it has started, so a coordinator that dies on the way (a bad install, a config that no
    longer resolves, a locked storage) reads as crashed at once instead of 'running' until its record goes stale
    (60 s). The coordinator takes a second to import before it writes its record, so the claim does not
    overwrite the coordinator's own write."""
    proc = spawn_detached(cmd, log_path)
    reap(proc)
    claim(proc.pid)
    return proc.pid


class TrainerLaunch(NamedTuple):
    """A trainer process started by :func:`start_trainer`; ``proc`` is for the caller to wait on."""

    run_id: str
    run_dir: Path
    proc: subprocess.Popen[bytes]
    config: config_mod.Config


class PreparedRun(NamedTuple):
    """A validated config and its pre-created run folder (placeholder run.json), ready to train."""

    config: config_mod.Config
    pairs: list[str]
    run_id: str
    run_dir: Path
    placeholder: rf.RunInfo


def prepare_run(
    runs_dir: Path,
    config_id: str,
    overrides: dict[str, Any] | None = None,
    *,
    parent_run_id: str | None = None,
    experiment_id: str | None = None,
    applied_changes: dict[str, Any] | None = None,
    sweep_id: str | None = None,
    trial_number: int | None = None,
    use_zoo: bool = True,
) -> PreparedRun:
    """Validate the config and pre-create its run folder with a placeholder run.json, so the run
    is visible (status running, no progress) before any trainer starts. ConfigError names a bad key.
    ``use_zoo=False``: without the RL Zoo's entry (`gsolve train --no-zoo`)."""
    overrides = dict(overrides or {})
    pairs = override_pairs(overrides)
    resolved = config_mod.resolve_with_origin(config_id, pairs, use_zoo=use_zoo)
    cfg = resolved.config
    check_tracking_available(cfg)  # a missing tracking extra is refused here, not by the detached trainer
    config_mod.check_trainable(cfg)  # so is an environment this machine cannot create (e.g. no box2d extra)
    runs_dir = Path(runs_dir).resolve()
    placeholder = run_writer.create_placeholder(runs_dir, cfg, overrides=config_mod.in_our_names(overrides, "--set").values,
                                                parent_run_id=parent_run_id,
                                                experiment_id=experiment_id, applied_changes=applied_changes,
                                                sweep_id=sweep_id, trial_number=trial_number,
                                                config_origin=resolved.origin)
    return PreparedRun(cfg, pairs, placeholder.run_id, runs_dir / placeholder.run_id, placeholder)


def start_trainer(
    runs_dir: Path,
    config_id: str,
    overrides: dict[str, Any] | None = None,
    *,
    parent_run_id: str | None = None,
    experiment_id: str | None = None,
    applied_changes: dict[str, Any] | None = None,
    sweep_id: str | None = None,
    trial_number: int | None = None,
    preexec: Callable[[], None] | None = None,
    use_zoo: bool = True,
) -> TrainerLaunch:
    """Validate the config, pre-create the run folder (placeholder run.json) and start
    ``gsolve train ... --run-id ID --quiet`` detached. The caller owns ``proc`` (wait on it or reap it).

    Raises ConfigError (a ValueError) naming the bad key and what is allowed. Returns at once.
    """
    prep = prepare_run(runs_dir, config_id, overrides, parent_run_id=parent_run_id, experiment_id=experiment_id,
                       applied_changes=applied_changes, sweep_id=sweep_id, trial_number=trial_number, use_zoo=use_zoo)
    cfg, pairs, run_id, run_dir, placeholder = prep
    runs_dir = run_dir.parent
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "train", cfg.config_id, *zoo_flag(use_zoo)]
    for pair in pairs:
        cmd += ["--set", pair]
    # --no-fail: an unsolved run is a finished trial (exit 0), not a failed one (jobs/backend.trial_failed).
    cmd += env_modules.flags_for(cfg)  # what this process was granted and the run needs (never more)
    cmd += ["--runs-dir", str(runs_dir), "--run-id", run_id, "--quiet", "--no-fail"]
    if parent_run_id is not None:
        cmd += ["--parent-run-id", parent_run_id]
    if experiment_id is not None:
        cmd += ["--experiment-id", experiment_id]
    if applied_changes:
        cmd += ["--applied-changes", json.dumps(applied_changes)]
    proc = spawn_detached(cmd, run_dir / rf.RUN_LOG, preexec)
    run_writer.record_launch_pid(run_dir, proc.pid)
    return TrainerLaunch(run_id, run_dir, proc, cfg)


# ---------------------------------------------------------------------------------------------
# Limits on what a server that others can reach may start (`gsolve mcp --max-live-runs ...`).
DEFAULT_MAX_ENV_STEPS = 10_000_000  # the largest preset (LunarLander) needs 1.5M: room for 6x that
DEFAULT_MAX_N_ENVS = 64  # with vectorization 'async' each sub-env is a process
_START_LOCK = threading.Lock()  # a check-then-start of the live-run cap is one step


class RunLimitError(ValueError):
    """A start refused by a server-side limit; the message names the limit, its flag and what to do."""


class StartLimits(NamedTuple):
    """What runs started over MCP may use: live runs at once, env-step budget, sub-environments."""

    max_live_runs: int
    max_env_steps: int
    max_n_envs: int

    @property
    def caps(self) -> dict[str, int]:
        """The caps by config key (CAP_FLAGS' keys), as over_caps and a fix's record take them."""
        return {"max_env_steps": self.max_env_steps, "n_envs": self.max_n_envs}

    @classmethod
    def from_options(
        cls, max_live_runs: int | None = None, max_env_steps: int | None = None, max_n_envs: int | None = None
    ) -> StartLimits:
        """The limits with defaults filled in (live runs: the CPU cores); each given value must be >= 1."""
        for flag, value in (("--max-live-runs", max_live_runs), ("--max-env-steps", max_env_steps),
                            ("--max-n-envs", max_n_envs)):
            if value is not None and value < 1:
                raise ValueError(f"{flag} must be at least 1, got {value}")
        return cls(max_live_runs or os.cpu_count() or 1, max_env_steps or DEFAULT_MAX_ENV_STEPS,
                   max_n_envs or DEFAULT_MAX_N_ENVS)


class LiveRun(NamedTuple):
    run_id: str
    config_id: str
    env_steps: int
    max_env_steps: int


def live_runs(store: RunStore) -> list[LiveRun]:
    """The runs of the folder whose trainer is alive (crash detection applied)."""
    out = []
    for run_id in store.run_ids():
        try:
            info = store.info(store.runs_dir / run_id)
        except (OSError, ValueError):
            continue  # unreadable: not something we can count as live
        if rf.effective_status(info) == rf.RunStatus.RUNNING:
            out.append(LiveRun(info.run_id, info.config_id, info.progress.env_steps, info.max_env_steps))
    return out


def check_capacity(store: RunStore, limits: StartLimits, needed: int = 1) -> int:
    """Free live-run slots (>= ``needed``), or RunLimitError naming the live runs and how to stop one."""
    live = live_runs(store)
    free = limits.max_live_runs - len(live)
    if free >= needed:
        return free
    if not live:  # a cap below what is needed (0 when built by hand): no run to name or stop
        raise RunLimitError(
            f"this server starts at most {limits.max_live_runs} runs at once (gsolve mcp --max-live-runs) and "
            f"this needs {needed}: raise the cap, or train from a shell with `gsolve train`")
    shown = ", ".join(f"{r.run_id} ({r.config_id}, {r.env_steps:,}/{r.max_env_steps:,} env steps)" for r in live[:10])
    more = f" and {len(live) - 10} more" if len(live) > 10 else ""
    raise RunLimitError(
        f"{len(live)} runs are live and this server starts at most {limits.max_live_runs} at once "
        f"(gsolve mcp --max-live-runs): {shown}{more}. Stop one with stop_training(run_id={live[0].run_id!r}) "
        f"or wait for one to finish (get_run_info with wait_seconds), then start again")


# The settings an MCP server caps, by config key, and the flag that sets each cap.
CAP_FLAGS = {"max_env_steps": "--max-env-steps", "n_envs": "--max-n-envs"}


def over_caps(values: Mapping[str, int], caps: Mapping[str, int]) -> list[str]:
    """A sentence for each of ``values`` (CAP_FLAGS' keys) above its cap in ``caps`` (a key without a cap is free)."""
    return [f"{key}={values[key]:,} is above this server's cap of {caps[key]:,} (gsolve mcp {flag})"
            for key, flag in CAP_FLAGS.items() if key in caps and key in values and values[key] > caps[key]]


def check_budget(limits: StartLimits, max_env_steps: int, n_envs: int, what: str = "the run") -> None:
    """RunLimitError if a run's budget or sub-environment count is above the server's caps."""
    problems = over_caps({"max_env_steps": max_env_steps, "n_envs": n_envs}, limits.caps)
    if problems:
        raise RunLimitError(
            f"{what}: " + "; ".join(problems) + f". Runs started over MCP are capped: pass overrides within the caps "
            f"(e.g. {{'max_env_steps': {min(max_env_steps, limits.max_env_steps)}, "
            f"'n_envs': {min(n_envs, limits.max_n_envs)}}}), or train from a shell with `gsolve train`")


def start_training(
    runs_dir: Path, config_id: str, overrides: dict[str, Any] | None = None, limits: StartLimits | None = None,
    *, use_zoo: bool = True,
) -> StartResult:
    """Validate ``ENV:VARIANT`` + overrides, create the run folder and start the trainer detached.

    With ``limits`` (a server that others can reach), refuse with RunLimitError when the live-run cap
    is reached or the run's budget or sub-environments are above the caps.
    Raises ConfigError (a ValueError) naming the bad key and what is allowed. Returns at once.
    """
    overrides = dict(overrides or {})
    if limits is None:
        launch = start_trainer(runs_dir, config_id, overrides, use_zoo=use_zoo)
    else:
        cfg = config_mod.resolve_config(config_id, override_pairs(overrides), use_zoo=use_zoo)
        check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"{cfg.config_id}")
        with _START_LOCK:
            check_capacity(RunStore(runs_dir), limits)
            launch = start_trainer(runs_dir, config_id, overrides, use_zoo=use_zoo)
    reap(launch.proc)
    cfg, run_id = launch.config, launch.run_id
    try:  # the placeholder's (or by now the trainer's own) record of where the settings came from
        origin = rf.read_run_info(launch.run_dir).config_origin
    except (OSError, ValueError):
        origin = None
    return StartResult(
        run_id=run_id, config_id=cfg.config_id, pid=launch.proc.pid, run_dir=str(launch.run_dir),
        max_env_steps=cfg.max_env_steps, reward_threshold=cfg.reward_threshold,
        overrides=config_mod.in_our_names(overrides, "--set").values,  # in our names, as the run records them
        settings_from=None if origin is None else f"{origin.settings}: {origin.where}",
        config_notes=[] if origin is None else origin.notes,
        note=f"training started in the background; follow it with get_run_info(run_id={run_id!r}, view='status', "
        "wait_seconds=60), end it early with stop_training",
    )


# ---------------------------------------------------------------------------------------------
class StopResult(BaseModel):
    run_id: str
    status: str = Field(description="status after the stop")
    stop_reason: str | None = None
    forced: bool = Field(description="True if the trainer did not record a graceful stop: it ignored SIGTERM and "
                         "was killed, or exited on the signal (e.g. during start-up); run.json records the "
                         "forced stop (failure kind 'forced_stop') and there was no final evaluation or checkpoint")
    waited_seconds: float
    message: str


def _looks_like_trainer(pid: int) -> bool:
    """Guard against pid reuse: only signal a process whose command line is one of our trainers."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return True  # no /proc (macOS): trust the pid from run.json
    text = b" ".join(argv)
    return b"train" in text and (b"gsolve" in text or b"gymnasium_solver" in text)


def _kill_group(pid: int, sig: signal.Signals) -> None:
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)  # the trainer leads its own session: include its env workers
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


async def stop_training(store: RunStore, run_dir: Path, timeout_seconds: float = 20.0) -> StopResult:
    """Stop a running training: SIGTERM (graceful: final eval + checkpoint), then SIGKILL after the timeout.

    A forced stop is recorded in run.json (status stopped, failure kind 'forced_stop').
    """
    if not 1 <= timeout_seconds <= MAX_STOP_TIMEOUT:
        raise ValueError(f"timeout_seconds must be between 1 and {MAX_STOP_TIMEOUT:g}, got {timeout_seconds}")
    info = store.info(run_dir)
    status = rf.effective_status(info)
    if status != rf.RunStatus.RUNNING:
        return StopResult(run_id=info.run_id, status=str(status), stop_reason=info.stop_reason, forced=False,
                          waited_seconds=0.0, message=f"run is not running (status {status}); nothing to stop")
    if info.pid is None:
        raise ValueError(f"run {info.run_id} has no pid in run.json yet; try again in a second")
    if info.host and info.host != socket.gethostname():
        raise ValueError(f"run {info.run_id} runs on host {info.host!r}, not this one; stop it there")
    pid = info.pid
    if not _looks_like_trainer(pid):
        raise ValueError(f"pid {pid} of run {info.run_id} is not a gsolve trainer any more; not signalling it")
    start = time.monotonic()
    # SIGTERM to the trainer only: its async env workers must live until it has finished its
    # final evaluation and checkpoint; SIGKILL (below) takes the whole process group.
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    forced = False
    while rf.pid_alive(pid):
        if time.monotonic() - start > timeout_seconds:
            _kill_group(pid, signal.SIGKILL)
            forced = True
            while rf.pid_alive(pid) and time.monotonic() - start < timeout_seconds + 5:
                await anyio.sleep(_POLL_SECONDS)
            break
        await anyio.sleep(_POLL_SECONDS)
    waited = round(time.monotonic() - start, 2)
    after = store.info(run_dir)
    recorded_forced = False
    if after.status == rf.RunStatus.RUNNING:
        # The trainer could not record its own stop (killed, or died on the signal).
        why = (f"did not stop within {timeout_seconds:g}s of SIGTERM; killed with SIGKILL" if forced
               else "exited on SIGTERM without recording its stop")
        run_writer.record_forced_stop(run_dir, after, why)
        recorded_forced = True  # recorded with failure kind 'forced_stop': the answer says the same
        after = store.info(run_dir)
    if forced:
        message = f"stopped by force after {waited}s (trainer ignored SIGTERM; killed with SIGKILL)"
    elif recorded_forced:
        message = (f"stopped in {waited}s, recorded as a forced stop: the trainer exited on SIGTERM before it could "
                   f"stop gracefully (e.g. still starting up), so there was no final evaluation or checkpoint")
    else:
        message = f"stopped gracefully in {waited}s"
    return StopResult(run_id=after.run_id, status=str(rf.effective_status(after)),
                      stop_reason=None if after.stop_reason is None else str(after.stop_reason),
                      forced=forced or recorded_forced, waited_seconds=waited, message=message)


# ---------------------------------------------------------------------------------------------
class WaitResult(BaseModel):
    status: TrainingStatus
    finished: bool
    waited_seconds: float
    note: str


ProgressCallback = Callable[[float, float | None, str], Awaitable[None]]


async def wait_for_training(
    store: RunStore, run_dir: Path, timeout_seconds: float = 30.0, progress: ProgressCallback | None = None
) -> WaitResult:
    """Wait until the run finishes or ``timeout_seconds`` (<= 60) pass, reporting progress.

    Returns the current status either way, so a caller can simply call again.
    """
    if not 0 <= timeout_seconds <= MAX_WAIT_SECONDS:
        raise ValueError(f"timeout_seconds must be between 0 and {MAX_WAIT_SECONDS:g}, got {timeout_seconds}")
    start = time.monotonic()
    last_steps = -1
    while True:
        st = await anyio.to_thread.run_sync(training_status, store, run_dir)
        if progress is not None and st.env_steps != last_steps:
            last_steps = st.env_steps
            await progress(float(st.env_steps), float(st.max_env_steps),
                           f"{st.status}: {st.env_steps}/{st.max_env_steps} env steps"
                           + (f", last eval {st.last_eval_return:.4g}" if st.last_eval_return is not None else ""))
        waited = time.monotonic() - start
        if st.finished or waited >= timeout_seconds:
            break
        await anyio.sleep(min(1.0, max(timeout_seconds - waited, 0.05)))
    waited = round(time.monotonic() - start, 2)
    note = (f"run finished: {st.status}" + (f" ({st.stop_reason})" if st.stop_reason else "") if st.finished
            else f"still running after {waited}s; call get_run_info again with wait_seconds to keep waiting")
    return WaitResult(status=st, finished=st.finished, waited_seconds=waited, note=note)
