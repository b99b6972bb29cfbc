"""One training run's state and bookkeeping (``Session``): its environments and agent, the evaluation
schedule, the metrics rows, checkpoints and how the run ends. training.py drives it; training_sb3.py
subclasses it for Stable-Baselines3 agents."""

from __future__ import annotations

import copy
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import torch

from gymnasium_solver.agents import agent_class
from gymnasium_solver.agents.common import Batch, NonFiniteLossError, ObsNormalizer, Policy, UpdateStats
from gymnasium_solver.agents.interface import Agent, LearnChunk, OffPolicyAgent, OnPolicyAgent
from gymnasium_solver.agents.networks import limit_threads
from gymnasium_solver.config import Config, PPOConfig
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M, RunStatus, StopReason
from gymnasium_solver.envs import SpaceSpec, action_space_info, make_vec_env, observation_kind, space_spec
from gymnasium_solver.train import checkpoint_retention as retention
from gymnasium_solver.train.checkpoints import (
    CheckpointState,
    ResumeState,
    TrainingState,
    numpy_rng_state,
    save_checkpoint,
    set_numpy_rng_state,
    snapshot,
)
from gymnasium_solver.train.evaluation import (  # noqa: F401 - the messages: tests reach them through here
    EvalResult,
    confirm,
    costly_evaluation_message,
    evaluate,
    unfinished_message,
)
from gymnasium_solver.train.progress import ProgressBar
from gymnasium_solver.train.rollout import RolloutCollector
from gymnasium_solver.train.run_writer import RunWriteError, RunWriter, writing

# Evaluation episodes use seeds far from the training envs' so they never replay training starts.
EVAL_SEED_OFFSET = 1_000_000
# A resumed run's training envs restart fresh episodes seeded away from the run's first reset.
RESUME_SEED_OFFSET = 2_000_000
# Confirmation episodes (config confirm_episodes) are seeded away from the evaluations' and the training's.
CONFIRM_SEED_OFFSET = 3_000_000

_T = TypeVar("_T")



class WeightSnapshot:
    """A policy's weights before an iteration, to put back when it turns non-finite: copied into tensors
    allocated on the first take, in one fused copy (a state_dict of fresh clones every iteration took about 4%
    of a profiled CartPole A2C run). The state_dict's tensors alias the weights, whose storage an
    in-place load keeps; :meth:`forget` after anything that may replace them (loading a checkpoint)."""

    def __init__(self) -> None:
        self._state: dict[str, torch.Tensor] | None = None  # the policy's own tensors, by state_dict key
        self._live: list[torch.Tensor] = []  # the same tensors, in that order
        self._saved: list[torch.Tensor] = []
        self._plain: dict[str, Any] | None = None  # a state that is not all tensors: deep-copied at every take

    def take(self, policy: Policy) -> None:
        if self._state is None:
            state = policy.state_dict()
            if not all(isinstance(v, torch.Tensor) for v in state.values()):
                self._plain = copy.deepcopy(state)
                return
            self._state, self._live = state, list(state.values())
            self._saved = [v.clone() for v in self._live]
            return
        with torch.no_grad():
            torch._foreach_copy_(self._saved, self._live)

    def restore(self, policy: Policy) -> None:
        if self._state is not None:
            policy.load_state_dict(dict(zip(self._state, self._saved, strict=True)))
        elif self._plain is not None:
            policy.load_state_dict(self._plain)

    def forget(self) -> None:
        self._state, self._live, self._saved, self._plain = None, [], [], None

class TrainResult(NamedTuple):
    """How a run ended. ``solved_at`` holds the env steps and wall seconds of the solving eval."""

    run_id: str
    run_dir: Path
    status: RunStatus
    stop_reason: StopReason
    solved: bool
    solved_at: rf.SolvedAt | None
    best_eval: rf.EvalRecord | None
    last_eval: rf.EvalRecord | None
    env_steps: int
    wall_seconds: float
    failure: rf.Failure | None = None



class Iteration(NamedTuple):
    """What one training iteration did, for its metrics row. ``rollout_seconds`` is collecting (on-policy)
    or everything but the gradient steps (off-policy: acting, env steps, storing transitions);
    ``update_seconds`` the targets and the update (on-policy) or the gradient steps and the measures
    taken after them (off-policy). docs/metrics.md says the same to readers."""

    env_steps: int
    rollout_seconds: float
    update_seconds: float
    stats: UpdateStats


class _Parts(NamedTuple):
    agent: Agent
    collector: Any  # RolloutCollector, or gymnasium_solver.agents.sb3.SB3Collector


class Session:
    """The state and bookkeeping of one training run."""

    def __init__(self, cfg: Config, writer: RunWriter, show_progress: bool, restore: ResumeState | None = None):
        self.cfg, self.writer, self.restore = cfg, writer, restore
        self.progress_bar = ProgressBar(cfg.max_env_steps) if show_progress else None
        self.t_start = time.perf_counter()
        self.iteration = 0
        self.solved = False
        self.eval_count = 0
        self.confirmed = 0  # confirmation episodes run so far (their seeds follow on)
        self.warned_luck = False  # a confirmation failed (warned once per run)
        self.warned_unfinished = False  # an evaluation's episodes did not end (warned once per run)
        self.warned_costly = False  # an evaluation stepped far more than the training between two (warned once)
        self.evaluated_at = 0  # env steps at the previous evaluation
        self.is_best = False
        self.pending_best: CheckpointState | None = None
        self.best_written_at = 0.0
        self.next_eval = cfg.eval_freq
        self.next_checkpoint = cfg.checkpoint_freq or None
        self.last_written_at = time.monotonic()
        self.resumable_last_written = False
        self.logged_steps = 0  # env steps at the last metrics row: checkpoints there are resumable
        self.agent: Agent | None = None
        self.snapshot = WeightSnapshot()  # the weights before the current iteration (_guarded)
        self.collector: Any = None  # RolloutCollector, or gymnasium_solver.agents.sb3.SB3Collector
        self.eval_env: Any = None
        self.env: Any = None

    # -- setup ---------------------------------------------------------------------------------
    def setup(self) -> _Parts:
        cfg, info = self.cfg, self.writer.info
        limit_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.t_start = time.perf_counter()
        self.eval_env = make_vec_env(cfg, cfg.eval_episodes)
        spec = space_spec(self.eval_env)
        self._build(spec)
        if self.restore is not None:
            self._restore(self.restore)
        info.action_space = action_space_info(spec)
        info.observation_shape = list(spec.observation_shape)
        info.observation_kind = observation_kind(self.eval_env)
        assert self.agent is not None
        info.device = str(self.agent.policy.device)
        for key, message in cfg.wasteful_settings() if self.restore is None else []:
            self.writer.warn("config_wastes_samples", key, message)  # run.json, run.log; stderr at the end
        self.writer.write()
        self.writer.log(
            f"{'resumed' if self.restore else 'started'} {cfg.config_id} seed {cfg.seed}: {cfg.algo}, "
            f"{cfg.network} on {info.device} (device: {cfg.device}), {cfg.n_envs} envs, budget {cfg.max_env_steps} env steps, threshold {cfg.reward_threshold}, pid {info.pid}"
        )
        return _Parts(self.agent, self.collector)

    def _build(self, spec: SpaceSpec) -> None:
        """The training environments, the agent and what collects its experience."""
        cfg = self.cfg
        self.env = make_vec_env(cfg, cfg.n_envs)
        self.normalizer = ObsNormalizer((spec.obs_dim,), cfg.normalize_observations)
        self.agent = agent_class(cfg.algo)(cfg, spec)
        env_seed = cfg.seed if self.restore is None else cfg.seed + RESUME_SEED_OFFSET + self.restore.iteration
        self.collector = RolloutCollector(self.env, spec, self.normalizer, cfg.reward_scale, env_seed, cfg.reward_clip,
                                          cfg.gamma if cfg.normalize_rewards else None)

    def _restore(self, state: ResumeState) -> None:
        """Put back everything a resumable checkpoint holds (see checkpoints.TrainingState)."""
        assert self.agent is not None
        t = state.training
        self.agent.policy.load_state_dict(state.model)
        self.snapshot.forget()
        self.agent.optimizer.load_state_dict(t.optimizer)
        self.normalizer.load_state_dict(state.normalizer)
        self.collector.load_state_dict(t.collector)
        torch.set_rng_state(t.torch_rng)
        set_numpy_rng_state(t.numpy_rng)
        self.iteration, self.eval_count, self.confirmed = state.iteration, t.eval_count, t.confirmed
        # run.json keeps its warnings across a resume: a check that failed before it was warned of then.
        self.warned_luck = any(w.kind == "solve_not_confirmed" for w in self.writer.info.warnings)
        self.next_eval, self.next_checkpoint = t.next_eval, t.next_checkpoint
        self.logged_steps = state.env_steps
        self.t_start = time.perf_counter() - state.wall_seconds

    @property
    def wall(self) -> float:
        return time.perf_counter() - self.t_start

    # -- learning, guarded -----------------------------------------------------------------------
    def guarded_update(self, agent: OnPolicyAgent, batch: Batch) -> UpdateStats:
        """An on-policy update, keeping the pre-update weights so a non-finite loss leaves the last good ones."""
        self.iteration += 1
        progress = self.collector.env_steps / self.cfg.max_env_steps
        return self._guarded(lambda: agent.update(batch, progress), lambda: "the update produced non-finite weights")

    def guarded_learn(self, agent: OffPolicyAgent) -> LearnChunk:
        """An off-policy iteration (env steps with gradient steps among them), keeping its starting
        weights so a non-finite loss or weight leaves the last good ones."""
        chunk = self._guarded(lambda: agent.learn(self.collector), lambda: (
            f"{self.cfg.algo} produced non-finite weights at {self.collector.env_steps} env steps"))
        self.iteration += 1  # counted once it has run, as before: a failure inside names the last one completed
        return chunk

    def _guarded(self, learn: Callable[[], _T], non_finite: Callable[[], str]) -> _T:
        """``learn()``, the gradient steps of an iteration: the weights from before it come back when it
        raises NonFiniteLossError or leaves non-finite weights (then NonFiniteLossError(non_finite())).
        The one copy of the weights an iteration makes."""
        assert self.agent is not None
        policy = self.agent.policy
        self.snapshot.take(policy)
        try:
            out = learn()
            if not policy.all_finite():
                raise NonFiniteLossError(non_finite())
        except NonFiniteLossError:
            self.snapshot.restore(policy)
            raise
        return out

    # -- evaluation ----------------------------------------------------------------------------
    def maybe_evaluate(self, final: bool) -> EvalResult | None:
        steps = self.collector.env_steps
        if steps < self.next_eval and not final:
            return None
        while self.next_eval <= steps:
            self.next_eval += self.cfg.eval_freq
        return self.evaluate_now()

    def evaluate_now(self) -> EvalResult:
        assert self.agent is not None
        seed = self.cfg.seed + EVAL_SEED_OFFSET + self.eval_count * self.cfg.eval_episodes
        self.eval_count += 1
        result = evaluate(self.agent.policy, self.normalizer, self.eval_env, seed)
        info, steps, wall = self.writer.info, self.collector.env_steps, self.wall
        record = rf.EvalRecord(
            return_mean=result.return_mean, return_std=result.return_std, episodes=result.episodes,
            env_steps=steps, wall_seconds=wall, iteration=self.iteration,
        )
        self.is_best = info.best_eval is None or record.return_mean > info.best_eval.return_mean
        info.last_eval = record
        if self.is_best:
            info.best_eval = record
        threshold = self.cfg.reward_threshold
        if threshold is not None and result.return_mean >= threshold and not self.solved:
            check = self._confirm(steps, result, threshold)
            if check is None or check.return_mean >= threshold:
                self.solved = True
                info.solved = True
                info.solved_at = rf.SolvedAt(
                    env_steps=steps, wall_seconds=wall, iteration=self.iteration, eval_return_mean=result.return_mean,
                    confirm_return_mean=None if check is None else check.return_mean,
                    confirm_episodes=0 if check is None else check.episodes)
        self._set_progress()
        self.writer.write()
        if result.unfinished and not self.warned_unfinished:  # after _set_progress: at this evaluation's env steps
            self.warned_unfinished = True
            self.writer.warn("eval_episodes_unfinished", "env_kwargs.max_episode_steps", unfinished_message(
                self.cfg, result))
        if not self.warned_costly and (costly := costly_evaluation_message(result, steps - self.evaluated_at)):
            self.warned_costly = True
            self.writer.warn("evaluation_costly", "eval_episodes", costly)
        self.evaluated_at = steps
        self.writer.log(
            f"eval at {steps} env steps: {result.return_mean:.2f} +- {result.return_std:.2f} "
            f"over {result.episodes} episodes" + (" (solved)" if self.solved else "")
        )
        if self.progress_bar is not None:  # piped output: one line per evaluation
            self.progress_bar.evaluated(steps, wall, result.return_mean, result.return_std, self.solved)
        return result

    def _confirm(self, steps: int, result: EvalResult, threshold: float) -> EvalResult | None:
        """confirm_episodes more episodes of the policy that just reached ``threshold`` (None when 0): a solve only if
        they average it too. Its time is not the solve's (solved_at is the evaluation's); a failed check is logged."""
        if not self.cfg.confirm_episodes:
            return None
        assert self.agent is not None
        check = confirm(self.agent.policy, self.normalizer, self.eval_env,
                        self.cfg.seed + CONFIRM_SEED_OFFSET + self.confirmed, self.cfg.confirm_episodes, threshold)
        self.confirmed += check.episodes
        said = (f"eval at {steps} env steps reached {result.return_mean:.4g} >= {threshold:g}; {check.episodes} more "
                f"episodes: {check.return_mean:.4g} +- {check.return_std:.4g}")
        if check.return_mean >= threshold:
            self.writer.log(f"{said} (confirmed)")
        elif self.warned_luck:
            self.writer.log(f"{said} (not solved: the evaluation was luck; training goes on)")
        else:  # once per run: in run.json's warnings, which the diagnosis and `gsolve train`'s end say
            self.warned_luck = True
            self._set_progress()
            self.writer.warn("solve_not_confirmed", "confirm_episodes", f"{said}: not solved, the evaluation was luck "
                             f"(training goes on); the policy is below the threshold by the larger sample")
        return check

    # -- logging -------------------------------------------------------------------------------
    def _set_progress(self) -> None:
        self.writer.info.progress = rf.Progress(
            env_steps=self.collector.env_steps, iteration=self.iteration, wall_seconds=self.wall
        )

    def log_iteration(self, it: Iteration, evaluation: EvalResult | None) -> None:
        episodes, stats = self.collector.summary(), it.stats
        fps = it.env_steps / max(it.rollout_seconds + it.update_seconds, 1e-9)
        row: dict[str, float | int | None] = {
            M.ITERATION: self.iteration, M.ENV_STEPS: self.collector.env_steps, M.WALL_SECONDS: self.wall,
            M.FPS: fps, M.ROLLOUT_SECONDS: it.rollout_seconds, M.UPDATE_SECONDS: it.update_seconds,
            M.EP_RETURN_MEAN: episodes.return_mean, M.EP_RETURN_STD: episodes.return_std,
            M.EP_LEN_MEAN: episodes.len_mean, M.EPISODES: episodes.episodes,
            M.POLICY_LOSS: stats.policy_loss, M.VALUE_LOSS: stats.value_loss, M.ENTROPY: stats.entropy,
            M.GRAD_NORM: stats.grad_norm, M.LEARNING_RATE: stats.learning_rate, M.ENT_COEF: stats.ent_coef,
            M.EXPLAINED_VARIANCE: stats.explained_variance, M.ACTION_STD: stats.action_std,
        }
        if evaluation is not None:
            row |= {M.EVAL_RETURN_MEAN: evaluation.return_mean, M.EVAL_RETURN_STD: evaluation.return_std,
                    M.EVAL_EP_LEN_MEAN: evaluation.ep_len_mean}
        if stats.extra:
            row |= stats.extra
        if isinstance(self.cfg, PPOConfig):
            row |= {M.APPROX_KL: stats.approx_kl, M.CLIP_FRACTION: stats.clip_fraction,
                    M.CLIP_RANGE: stats.clip_range, M.EPOCHS_COMPLETED: stats.epochs_completed}
        self.writer.append_metrics(row)
        self.logged_steps = self.collector.env_steps
        self._set_progress()
        self.writer.heartbeat()
        if self.progress_bar is not None:
            last = self.writer.info.last_eval
            self.progress_bar.update(self.collector.env_steps, self.wall, fps, episodes.return_mean,
                                     None if last is None else last.return_mean)

    # -- checkpoints ---------------------------------------------------------------------------
    def _snapshot(self, eval_mean: float | None, resumable: bool = False) -> CheckpointState:
        assert self.agent is not None
        return snapshot(self.agent.policy, self.normalizer, env_steps=self.collector.env_steps,
                        iteration=self.iteration, wall_seconds=self.wall, eval_return_mean=eval_mean,
                        training=self._training_state() if resumable else None)

    def _training_state(self) -> TrainingState:
        assert self.agent is not None
        return TrainingState(
            optimizer=copy.deepcopy(self.agent.optimizer.state_dict()), torch_rng=torch.get_rng_state(),
            numpy_rng=numpy_rng_state(), collector=self.collector.state_dict(), eval_count=self.eval_count,
            next_eval=self.next_eval, next_checkpoint=self.next_checkpoint, confirmed=self.confirmed,
        )

    @property
    def at_iteration_end(self) -> bool:
        """True between iterations (the last one fully logged): only then is a checkpoint resumable."""
        return self.collector is not None and self.collector.env_steps == self.logged_steps

    def save_last(self, eval_mean: float | None, completed: bool = False) -> None:
        """Write `last`, resumable when between iterations; a failure mid-iteration keeps the resumable
        `last` on disk (if any). A completed run is never resumed: its `last` holds the weights only."""
        resumable = self.at_iteration_end and not completed
        if not resumable and self.resumable_last_written and not completed:
            self.writer.log("kept the last resumable `last` checkpoint (the failure was mid-iteration)")
            return
        save_checkpoint(self.writer.run_dir, rf.LAST_CHECKPOINT, self._snapshot(eval_mean, resumable), self.cfg)
        self.resumable_last_written = resumable
        self.last_written_at = time.monotonic()

    def maybe_checkpoint(self, evaluation: EvalResult | None) -> None:
        """`best` is copied in memory at every better evaluation and written at most every
        HEARTBEAT_SECONDS / 2 and when the run ends (a write costs ~15 ms on this machine, and a fast
        run improves at nearly every evaluation); periodic checkpoints are written at once."""
        if evaluation is not None and self.is_best:
            self.pending_best = self._snapshot(evaluation.return_mean)
        if self.pending_best is not None and time.monotonic() - self.best_written_at >= rf.HEARTBEAT_SECONDS / 2:
            self.flush_best()
        steps = self.collector.env_steps
        eval_mean = evaluation.return_mean if evaluation else None
        if self.next_checkpoint is not None and steps >= self.next_checkpoint:
            while self.next_checkpoint <= steps:
                self.next_checkpoint += self.cfg.checkpoint_freq
            save_checkpoint(self.writer.run_dir, retention.periodic_name(steps), self._snapshot(eval_mean, resumable=True),
                            self.cfg)
            self.prune(rf.PERIODIC_CHECKPOINT_PREFIX, retention.last_n, self.cfg.keep_last_checkpoints)
        if evaluation is not None and self.cfg.keep_best_checkpoints:
            self.keep_if_top(evaluation.return_mean)
        # `last`, periodically, so that a crash loses at most last_checkpoint_seconds of training.
        if time.monotonic() - self.last_written_at >= self.cfg.last_checkpoint_seconds:
            self.save_last(eval_mean)

    def keep_if_top(self, eval_return: float) -> None:
        """Save this evaluation's policy as ``eval_<env_steps>`` if it ranks among the
        keep_best_checkpoints best, and prune the one it pushes out."""
        n, run_dir = self.cfg.keep_best_checkpoints, self.writer.run_dir
        if retention.would_rank(retention.existing(run_dir, rf.TOP_EVAL_CHECKPOINT_PREFIX), eval_return, n):
            name = retention.top_eval_name(self.collector.env_steps)
            save_checkpoint(run_dir, name, self._snapshot(eval_return), self.cfg)
            self.prune(rf.TOP_EVAL_CHECKPOINT_PREFIX, retention.best_n, n)

    def prune(self, prefix: str, keep: Callable[[list[retention.Kept], int], list[retention.Kept]], n: int) -> None:
        """Delete the checkpoints named ``prefix<env_steps>`` that ``keep(candidates, n)`` does not
        keep (n = 0: keep all). The newest one was written first, so a crash never loses it."""
        if n <= 0:
            return
        candidates = retention.existing(self.writer.run_dir, prefix)
        for name in retention.to_prune(candidates, keep(candidates, n)):
            with writing(self.writer.run_dir, f"{rf.CHECKPOINTS_DIR}/{name}"):
                retention.delete_checkpoint(self.writer.run_dir, name)

    def flush_best(self) -> None:
        if self.pending_best is not None:
            save_checkpoint(self.writer.run_dir, rf.BEST_CHECKPOINT, self.pending_best, self.cfg)
            self.pending_best = None
        self.best_written_at = time.monotonic()

    # -- endings -------------------------------------------------------------------------------
    def finish(self, status: RunStatus, reason: StopReason, failure: rf.Failure | None = None) -> None:
        """Write `best` and `last`, then the final run.json."""
        self.flush_best()
        last = self.writer.info.last_eval
        self.save_last(None if last is None else last.return_mean, completed=status is RunStatus.COMPLETED)
        self._set_progress()
        self.writer.finish(status, reason, failure)
        solved_at = self.writer.info.solved_at
        detail = f" at {solved_at.env_steps} env steps, {solved_at.wall_seconds:.2f}s" if solved_at else ""
        self.writer.log(f"finished: {status.value} ({reason.value}){detail}; {self.collector.env_steps} env steps")

    def fail(self, reason: StopReason, kind: str, message: str, tb: str | None = None,
             status: RunStatus = RunStatus.FAILED) -> None:
        """Record a failure; evaluate and keep the last good weights as `last` when possible. Every
        write here is best effort: the failure may be the disk refusing writes."""
        steps = self.collector.env_steps if self.collector is not None else 0
        failure = rf.Failure(kind=kind, message=message, env_steps=steps, iteration=self.iteration)
        self._log_quietly(f"{status.value.upper()} ({reason.value}) at {steps} env steps, "
                          f"iteration {self.iteration}: {message}")
        if tb:
            self._log_quietly(tb.rstrip())
        if self.agent is not None and self.agent.policy.all_finite():
            try:
                self.evaluate_now()
            except Exception:  # noqa: BLE001 - the run already failed; record that, not this
                self._log_quietly("could not evaluate after the failure:\n" + traceback.format_exc())
            try:
                self.finish(status, reason, failure)
                return
            except Exception:  # noqa: BLE001
                self._log_quietly("could not write checkpoints or run.json after the failure:\n"
                                  + traceback.format_exc())
        if self.collector is not None:
            self._set_progress()
        try:
            self.writer.finish(status, reason, failure)
        except RunWriteError as exc:
            # run.json cannot record the failure: readers will see a trainer gone without recording
            # why. Say so where it can still be seen (the result, stderr, run.log if it takes it).
            failure.message += f"; {exc}, so run.json could not record this failure"
            print(f"gsolve train: run {self.writer.info.run_id} {status.value}: {failure.message}", file=sys.stderr)
            self._log_quietly(f"run.json could not record the failure: {exc}")

    def _log_quietly(self, message: str) -> None:
        """Write to run.log if the disk still takes it (it may be the file that failed)."""
        try:
            self.writer.log(message)
        except RunWriteError:
            pass

    def close(self) -> None:
        if self.progress_bar is not None:
            self.progress_bar.close()
        for env in (self.env, self.eval_env):
            if env is not None:
                env.close()
        self.writer.close()

    def result(self) -> TrainResult:
        info = self.writer.info
        return TrainResult(
            run_id=info.run_id, run_dir=self.writer.run_dir, status=info.status,
            stop_reason=info.stop_reason or StopReason.ERROR, solved=info.solved, solved_at=info.solved_at,
            best_eval=info.best_eval, last_eval=info.last_eval, env_steps=info.progress.env_steps,
            wall_seconds=info.progress.wall_seconds, failure=info.failure,
        )
