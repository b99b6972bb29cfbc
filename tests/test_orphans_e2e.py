"""A SIGKILLed `gsolve fix` leaves no trainer behind (issue 26 item 5): its trials get the kernel's
parent-death signal, stop gracefully and record it, and its record reads as crashed.

Real processes: the coordinator is a `gsolve fix` subprocess on the planted learning-rate fault copied
from the corpus (its baseline trial, lr 1e-5 on a fresh seed, trains for minutes if nothing stops it).
Every wait is bounded polling with a deadline; nothing assumes how fast the machine is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus_util import copy_case

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.experiments import read_record

pytestmark = pytest.mark.slow

START_DEADLINE = 180.0  # for the coordinator to import, diagnose and have a trial training
EXIT_DEADLINE = 60.0  # for a trial to notice its coordinator died and finish its graceful stop


def trial_infos(runs: Path, parent: str) -> list[rf.RunInfo]:
    out = []
    for d in sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != parent):
        try:
            out.append(rf.read_run_info(d))
        except (OSError, ValueError):
            continue  # being written for the first time
    return out


def group_members(pgid: int) -> list[int]:
    """Live processes in process group ``pgid`` (a trial and its env workers: each trial is its own session)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


def training(info: rf.RunInfo) -> bool:
    """The trial's trainer is alive and past its first iteration (its stop handler is installed)."""
    return (info.status == rf.RunStatus.RUNNING and not info.placeholder and info.pid is not None
            and rf.pid_alive(info.pid) and info.progress.env_steps > 0)


def settled(infos: list[rf.RunInfo]) -> bool:
    """Every trial is either training or has finished: none is between its fork and its first iteration."""
    return bool(infos) and any(training(i) for i in infos) and all(
        training(i) or i.status != rf.RunStatus.RUNNING for i in infos)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_sigkilled_fix_leaves_no_trainer_and_reads_as_crashed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    parent = copy_case("lr_low_s0", runs)
    log = tmp_path / "fix.log"
    with log.open("wb") as out:
        coordinator = subprocess.Popen(
            [sys.executable, "-m", "gymnasium_solver.cli.app", "fix", parent, "--runs-dir", str(runs), "--max-trials", "2",
             "--parallel", "2", "--seeds", "2"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # Freeze the coordinator (SIGSTOP) at a moment when every trial it started is training, so none is
        # caught between its fork and its trainer's first iteration; then SIGKILL it.
        deadline = time.monotonic() + START_DEADLINE
        while True:
            assert coordinator.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, f"no trial training after {START_DEADLINE:g}s: {log.read_text()[-3000:]}"
            if any(training(i) for i in trial_infos(runs, parent)):
                os.kill(coordinator.pid, signal.SIGSTOP)
                frozen_until = time.monotonic() + 15.0
                while time.monotonic() < frozen_until and not settled(trial_infos(runs, parent)):
                    time.sleep(0.1)
                if settled(trial_infos(runs, parent)):
                    break
                os.kill(coordinator.pid, signal.SIGCONT)  # a trial was still starting: try again
            time.sleep(0.1)
        at_kill = {i.run_id: i for i in trial_infos(runs, parent)}
        running = {i.run_id: i.pid for i in at_kill.values() if i.status == rf.RunStatus.RUNNING}
        assert running, at_kill
        os.kill(coordinator.pid, signal.SIGKILL)
        coordinator.wait(timeout=30)
    finally:
        if coordinator.poll() is None:
            os.kill(coordinator.pid, signal.SIGKILL)
            coordinator.wait(timeout=30)

    # Every trial that was training notices, records a graceful stop and exits with its env workers.
    deadline = time.monotonic() + EXIT_DEADLINE
    while True:
        infos = {i.run_id: i for i in trial_infos(runs, parent)}
        alive = {run_id: pid for run_id, pid in running.items()
                 if pid is not None and (rf.pid_alive(pid) or group_members(pid))}
        unrecorded = [r for r in running if infos[r].status == rf.RunStatus.RUNNING]
        if (not alive and not unrecorded) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not alive, f"orphan trainers after {EXIT_DEADLINE:g}s: {alive}"
    assert not unrecorded, f"trials still 'running' in run.json: {unrecorded}"
    assert set(infos) == set(at_kill)  # no trial started after the coordinator died
    for run_id in running:
        info = infos[run_id]
        # A candidate may solve in the iteration its stop signal arrived in; anything else recorded a stop.
        if not info.solved:
            assert (info.status, info.stop_reason) == (rf.RunStatus.STOPPED, rf.StopReason.USER_STOPPED), info
            assert info.progress.env_steps < info.max_env_steps  # stopped, not trained to its budget

    exp_id = next(p.stem for p in (runs / ".experiments").glob("fix-*.json"))
    record = read_record(runs, exp_id)
    assert record.status == "crashed" and "its coordinator process exited" in record.message
    assert record.pid == coordinator.pid
    assert not [t for t in record.trials if t.outcome == "running"]
    # The unchanged config (lr 1e-5) cannot solve: its trial was training at the kill and recorded a stop.
    baseline = [t.run_id for t in record.trials if t.role == "baseline" and t.run_id in running]
    assert baseline and all(infos[r].status == rf.RunStatus.STOPPED for r in baseline if r is not None)
    assert {t.run_id for t in record.trials if t.outcome == "stopped_early"} >= set(running)
