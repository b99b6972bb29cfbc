"""The training loop: ``train(cfg)`` runs an algorithm (ours from gymnasium_solver/agents/, or a Stable-Baselines3 one
through training_sb3.py) and writes one run folder.

``train`` reads as the algorithm, in the protocol its row in algorithms.py says it has: on-policy
(collect a rollout, compute targets, update) or off-policy (learn while collecting: env steps with
gradient steps among them); gymnasium_solver/agents/interface.py names both. The bookkeeping (run folder, evaluation
schedule, checkpoints, progress bar, failure handling) lives in ``session.Session``.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any, cast

from gymnasium_solver.agents import agent_class
from gymnasium_solver.agents.common import NonFiniteLossError
from gymnasium_solver.agents.interface import Agent, OffPolicyAgent, OnPolicyAgent
from gymnasium_solver.config import Config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.algorithms import NATIVE, ON_POLICY
from gymnasium_solver.contract.run_folder import RunStatus, StopReason
from gymnasium_solver.train.checkpoints import load_resume_state
from gymnasium_solver.train.resume import next_step_after_failure, plan_resume
from gymnasium_solver.train.run_guards import stop_on_signals, warnings_to
from gymnasium_solver.train.run_writer import RunWriteError, RunWriter, lock_run_folder
from gymnasium_solver.train.session import Iteration, Session, TrainResult
from gymnasium_solver.train.tracking import check_tracking_available

__all__ = ["TrainResult", "resume", "train"]


def train(
    cfg: Config,
    runs_dir: Path | None = None,
    *,
    run_id: str | None = None,
    show_progress: bool = False,
    parent_run_id: str | None = None,
    experiment_id: str | None = None,
    applied_changes: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
    config_origin: rf.ConfigOrigin | None = None,
) -> TrainResult:
    """Train ``cfg`` until an evaluation reaches the reward threshold or the env-step budget is
    spent; write everything to ``runs_dir/<run_id>/`` (see run_folder.py). Failures (non-finite
    loss, exceptions) and SIGINT/SIGTERM end the run gracefully and are recorded in run.json; only
    a bad run id / occupied run folder, or a tracking sink whose library is missing, raises
    (ValueError) before anything is written."""
    check_tracking_available(cfg)
    session_class = _session_class(cfg)  # SB3's import fails here, before a run folder exists, if it must
    writer = RunWriter.create(
        cfg, rf.resolve_runs_dir(runs_dir), run_id, columns=rf.columns_for(cfg.algo, cfg.grad_norm_parts),
        parent_run_id=parent_run_id, experiment_id=experiment_id, applied_changes=applied_changes,
        overrides=overrides, config_origin=config_origin,
    )
    return _run(session_class(cfg, writer, show_progress))


def _session_class(cfg: Config) -> type[Session]:
    """Our own agents run in ``Session``; Stable-Baselines3 ones in its subclass (imported only then)."""
    if cfg.algo in NATIVE:
        return Session
    from gymnasium_solver.train.training_sb3 import SB3Session

    return SB3Session


def resume(run_dir: Path, *, show_progress: bool = False) -> TrainResult:
    """Continue a crashed, stopped or failed run from its latest resumable checkpoint (``last`` or
    a periodic one): weights, optimizer, normaliser, RNGs, counters and schedules are restored, the
    environments start fresh episodes, and metrics.csv continues after the checkpoint's iteration
    (docs/resume.md). ValueError, before anything is written, says why a run cannot be resumed."""
    lock = lock_run_folder(run_dir)
    try:
        plan = plan_resume(run_dir)
        check_tracking_available(plan.config)
        state = load_resume_state(plan.checkpoint_path)
        writer = RunWriter.resume(run_dir, plan.config, lock, checkpoint=plan.checkpoint.name,
                                  env_steps=state.env_steps, iteration=state.iteration,
                                  wall_seconds=state.wall_seconds)
    except BaseException:
        lock.close()
        raise
    return _run(Session(plan.config, writer, show_progress, restore=state))


def _run(s: Session) -> TrainResult:
    cfg, writer = s.cfg, s.writer
    with stop_on_signals() as stop_requested, warnings_to(writer):
        try:
            if getattr(agent_class(cfg.algo), "uses_torch_optim", True):
                # torch.optim imports torch._dynamo when the first optimizer is built (1-2 s, as long as
                # importing torch): imported now, that stays out of the run's clock (which starts at
                # environment creation). PPO's Adam is ours (gymnasium_solver/agents/optim.py) and needs none of it.
                import torch._dynamo  # noqa: F401
            agent, collector = s.setup()  # environments (the wall clock starts here), agent
            iterate = _on_policy_iteration if cfg.algo in ON_POLICY else _off_policy_iteration
            while True:
                # 1-3. Learn from one iteration's experience, as the algorithm does (below).
                it = iterate(s, agent)
                # 4. Maybe evaluate: on schedule, and always before the run ends.
                out_of_budget = collector.env_steps >= cfg.max_env_steps
                stopping = stop_requested()  # read once: a stop always gets its final evaluation
                evaluation = s.maybe_evaluate(final=out_of_budget or stopping)
                # 5. Log the iteration.
                s.log_iteration(it, evaluation)
                # 6. Maybe checkpoint (best follows the best evaluation; periodic if configured).
                s.maybe_checkpoint(evaluation)
                if s.solved:
                    s.finish(RunStatus.COMPLETED, StopReason.SOLVED)
                    break
                if stopping:
                    s.finish(RunStatus.STOPPED, StopReason.USER_STOPPED)
                    break
                if out_of_budget:
                    s.finish(RunStatus.COMPLETED, StopReason.BUDGET_EXHAUSTED)
                    break
        except NonFiniteLossError as exc:
            s.fail(StopReason.NON_FINITE_LOSS, "non_finite_loss", str(exc))
        except RunWriteError as exc:
            # The disk refused a write (full, read-only, ...): a failure of its own kind, recorded as
            # such, so that readers do not take it for a crash or for a bug in the trainer.
            # The advice must work: a resume only when a checkpoint exists for it to take (issue 26).
            then = next_step_after_failure(writer.run_dir, cfg, writer.info.overrides)
            s.fail(StopReason.ERROR, exc.kind, f"{exc}, then {then}", traceback.format_exc())
        except Exception as exc:  # noqa: BLE001 - failures are data: recorded, not raised
            message = str(exc) or type(exc).__name__
            if stop_requested():
                # A stop signal sent to the whole process group also ends async env workers,
                # which surfaces here as an env error: it is still the user's stop.
                s.fail(StopReason.USER_STOPPED, type(exc).__name__, message, traceback.format_exc(),
                       status=RunStatus.STOPPED)
            else:
                s.fail(StopReason.ERROR, type(exc).__name__, message, traceback.format_exc())
        finally:
            s.close()
    return s.result()


def _on_policy_iteration(s: Session, agent: Agent) -> Iteration:
    """PPO, A2C, REINFORCE: collect a rollout with the current policy, compute its targets, update."""
    agent = cast(OnPolicyAgent, agent)  # its row in algorithms.py: on-policy
    # 1. Collect a rollout with the current policy.
    t0 = time.perf_counter()
    rollout = agent.collect(s.collector)
    t1 = time.perf_counter()
    # 2. Compute advantages (GAE) or returns-to-go.
    batch = agent.targets(rollout)
    # 3. Update the policy (a non-finite loss raises before the optimizer step; the weights go back).
    stats = s.guarded_update(agent, batch)
    return Iteration(rollout.env_steps, t1 - t0, time.perf_counter() - t1, stats)


def _off_policy_iteration(s: Session, agent: Agent) -> Iteration:
    """DQN and the SB3 algorithms learn while they collect: ``iteration_steps`` env steps, acting with
    the current policy and storing transitions, with gradient steps on replayed ones every ``train_freq``
    (a non-finite loss or weight puts back the iteration's starting weights). Its time is split into
    the gradient steps (update) and the rest (rollout)."""
    agent = cast(OffPolicyAgent, agent)  # its row in algorithms.py: off-policy
    t0 = time.perf_counter()
    chunk = s.guarded_learn(agent)
    t1 = time.perf_counter()
    stats = agent.stats()
    return Iteration(chunk.env_steps, t1 - t0 - chunk.gradient_seconds,
                     chunk.gradient_seconds + time.perf_counter() - t1, stats)
