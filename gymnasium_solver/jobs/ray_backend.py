"""Trials on Ray: the :class:`~gymnasium_solver.jobs.backend.TrialBackend` calls as Ray tasks.

``start`` validates the config and pre-creates the run folder here (the placeholder run.json, as
every backend does), then submits a Ray task that trains into that folder; the runs folder must
therefore be the same path on every node (a shared file system; see docs/sweeps.md). ``exit_code``
asks Ray whether the task has finished (0: returned, 1: raised or lost), and ``stop`` cancels the
task: ``ray.cancel`` without force raises KeyboardInterrupt in the trial through Python's SIGINT
handling, which the trainer turns into its graceful stop (a final evaluation and checkpoint);
``force`` kills the worker. Ray worker processes are reused across tasks, so a trial does not pay
the trainer's import (torch, gymnasium) again, as the fork backend avoids it locally.

Ray is imported only when a RayBackend is built (``gsolve sweep --backend ray``, ``gsolve fix
--backend ray``); it is the ``ray`` extra: ``pip install 'gymnasium-solver[ray]'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymnasium_solver import launcher
from gymnasium_solver.config import env_modules
from gymnasium_solver.jobs.trial import TrialHandle, TrialSpec


def _train_trial(cfg: Any, runs_dir: str, run_id: str, provenance: dict[str, Any], overrides: dict[str, Any],
                 env_grants: tuple[list[str], list[str]] = ([], [])) -> int:
    """The Ray task: train one trial into its pre-created run folder (runs on a Ray worker). ``env_grants``:
    the coordinator's --env-package/--env-class grants this trial needs (a worker imports nothing else)."""
    import signal

    from gymnasium_solver.config import env_modules
    from gymnasium_solver.train.training import train

    env_modules.grant_from_flags(*env_grants)

    # Ray workers may ignore SIGTERM/SIGINT; the trainer installs its own handlers for the run.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    train(cfg, Path(runs_dir), run_id=run_id, parent_run_id=provenance.get("parent_run_id"),
          experiment_id=provenance.get("experiment_id"), applied_changes=provenance.get("applied_changes"),
          overrides=overrides)
    return 0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError("the Ray backend needs Ray: pip install 'gymnasium-solver[ray]'") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> Any:
    """Join the Ray cluster at ``address`` (e.g. ``ray://head:10001`` or ``auto``), or start a local
    instance; reuses a connection this process already has. A sentence when the cluster is unreachable."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
    if address is None:
        kwargs["num_cpus"] = num_cpus
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
        raise ValueError(f"cannot connect to {where}: {exc}. Check the address (ray status on the head node "
                         f"prints it; ray://HOST:10001 for Ray Client) or omit --address for a local instance") from None
    return ray


class RayBackend:
    """Trials as Ray tasks (one CPU each) writing to the shared runs folder."""

    def __init__(self, runs_dir: Path, capacity: int | None = None, address: str | None = None,
                 cpus_per_trial: float = 1.0):
        self.ray = connect(address, num_cpus=capacity if address is None else None)
        self.runs_dir = Path(runs_dir).resolve()
        cluster_cpus = int(self.ray.cluster_resources().get("CPU", 1))
        if capacity is not None and capacity < 1:
            raise ValueError(f"parallel must be at least 1, got {capacity}")
        self.capacity = min(capacity, cluster_cpus) if capacity else max(1, cluster_cpus)
        self._task = self.ray.remote(num_cpus=cpus_per_trial, max_retries=0)(_train_trial)
        self._codes: dict[str, int] = {}

    def start(self, spec: TrialSpec) -> TrialHandle:
        prov = spec.provenance()
        prep = launcher.prepare_run(self.runs_dir, spec.config_id, spec.overrides, **prov, use_zoo=spec.use_zoo)
        env_modules.require_config(prep.config)  # granted here, so the worker may import it too
        grants = (list(prep.config.env_package), [prep.config.env_class] if prep.config.env_class else [])
        ref = self._task.remote(prep.config, str(self.runs_dir), prep.run_id, prov, spec.overrides, grants)
        return TrialHandle(prep.run_id, prep.run_dir, ref)

    def exit_code(self, handle: TrialHandle) -> int | None:
        if handle.run_id in self._codes:
            return self._codes[handle.run_id]
        done, _ = self.ray.wait([handle.token], timeout=0)
        if not done:
            return None
        try:
            code = int(self.ray.get(handle.token))
        except Exception:  # noqa: BLE001 - a task error, a cancellation or a lost worker: the run folder says which
            code = 1
        self._codes[handle.run_id] = code
        return code

    def stop(self, handle: TrialHandle, force: bool = False) -> None:
        if self.exit_code(handle) is not None:
            return
        try:
            self.ray.cancel(handle.token, force=force)
        except Exception:  # noqa: BLE001, S110 - the task finished between the check and the cancel
            pass
