"""The promotion policy: a run's best checkpoint becomes a registered version of its environment
only when every check passes (``gsolve promote``, MCP ``promote_run``).

Checks, all run and all recorded:
- **solved**: the run reached its reward threshold (run.json ``solved``);
- **diagnosis**: its diagnosis has no critical or warning finding;
- **checkpoint**: it has a readable ``best`` checkpoint trained on the run's environment;
- **evaluation**: a fresh deterministic re-evaluation over M episodes (default 100, 2..1000) on
  seeds no training evaluation and no other promotion used (allocated under the registry's lock)
  has mean return >= the run's reward threshold; the one-sided 95% lower confidence bound of that
  mean (Student t) is stated in the record. Returns that are not finite numbers fail the check.

A failed policy is a rejection, recorded with the failing checks, unless a person approves it
manually from the CLI with a reason (recorded as ``manual_approval``). torch is imported only by
the re-evaluation.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

from gymnasium_solver.config.env_modules import EnvModuleError
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.maths import stats
from gymnasium_solver.ops import model_registry as reg
from gymnasium_solver.ops.registry_records import (
    MIN_EPISODES,
    Decision,
    DecisionKind,
    EvaluationSummary,
    PolicyCheck,
    check_episodes,
)
from gymnasium_solver.run_store import RunStore, refuse_live

DEFAULT_EPISODES = 100
CONFIDENCE = 0.95
MAX_REASON_CHARS = 500


class Reevaluation(NamedTuple):
    summary: EvaluationSummary | None
    check: PolicyCheck


class EpisodeReturns(NamedTuple):
    returns: list[float]  # one per episode
    checkpoint_env_steps: int


def check_solved(info: rf.RunInfo) -> PolicyCheck:
    if info.solved and info.solved_at is not None:
        return PolicyCheck(name="solved", passed=True, detail=f"solved at {info.solved_at.env_steps:,} env steps "
                           f"(eval {info.solved_at.eval_return_mean:.4g} >= threshold {info.reward_threshold:g})")
    thr = "no finite reward threshold" if info.reward_threshold is None or not math.isfinite(info.reward_threshold) \
        else f"threshold {info.reward_threshold:g}"
    best = f"best eval {info.best_eval.return_mean:.4g}" if info.best_eval else "no evaluation"
    return PolicyCheck(name="solved", passed=False, detail=f"the run did not solve ({best}, {thr}, status "
                       f"{info.status.value})")


def check_diagnosis(store: RunStore, run_dir: Path) -> PolicyCheck:
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.diagnostics.models import Severity

    try:
        diagnosis = diagnose_run_dir(store, run_dir)
    except (ValueError, OSError) as exc:
        return PolicyCheck(name="diagnosis", passed=False, detail=f"the run could not be diagnosed: {exc}")
    bad = [f for f in diagnosis.findings if f.severity in (Severity.CRITICAL, Severity.WARNING)]
    if bad:
        listed = "; ".join(f"{f.severity.value} {f.id}: {f.title}" for f in bad[:5])
        return PolicyCheck(name="diagnosis", passed=False, detail=f"{len(bad)} critical/warning finding(s): {listed} "
                           f"(`gsolve diagnose {run_dir.name}`)")
    return PolicyCheck(name="diagnosis", passed=True, detail=f"verdict {diagnosis.verdict.value}, no critical or warning "
                       f"finding ({len(diagnosis.findings)} info)")


def run_episodes(checkpoint: Path, info: rf.RunInfo, episodes: int, seed: int) -> EpisodeReturns:
    """Play ``episodes`` deterministic episodes of the (staged) checkpoint on seeds seed.. (torch)."""
    from gymnasium_solver.envs import make_vec_env, space_spec
    from gymnasium_solver.train.checkpoints import checkpoint_config, load_checkpoint  # torch: only now
    from gymnasium_solver.train.evaluation import evaluate

    cfg = checkpoint_config(checkpoint)
    if (cfg.env_id, str(cfg.algo)) != (info.env_id, info.algo):
        raise ValueError(f"its best checkpoint was trained as {cfg.env_id} {cfg.algo}, not as the run's "
                         f"{info.env_id} {info.algo}")
    env = make_vec_env(cfg, episodes)
    try:
        loaded = load_checkpoint(checkpoint, space_spec(env))
        result = evaluate(loaded.policy, loaded.normalizer, env, seed)
    finally:
        env.close()
    return EpisodeReturns([float(r) for r in result.returns], loaded.env_steps)


def _failed(detail: str) -> Reevaluation:
    return Reevaluation(None, PolicyCheck(name="evaluation", passed=False, detail=detail))


def _mean_std(returns: list[float]) -> tuple[float, float]:
    """Mean and population std of finite returns; inf where they overflow (e.g. returns near 1e308)."""
    n = len(returns)
    try:
        mean = math.fsum(returns) / n
    except OverflowError:  # finite returns whose sum is not: scale by the largest, which cannot overflow
        scale = max(abs(r) for r in returns)
        mean = scale * (math.fsum(r / scale for r in returns) / n)
    try:
        return mean, math.sqrt(math.fsum(((r - mean) / math.sqrt(n)) ** 2 for r in returns))
    except OverflowError:  # float ** raises where * would give inf
        return mean, math.inf


def summarize(played: EpisodeReturns, info: rf.RunInfo, seed: int) -> Reevaluation:
    """The evaluation check and its record from the episode returns. Only finite numbers are
    recorded (JSON has no infinity): returns that are not finite, or whose mean or spread overflow,
    fail the check with no summary, so nothing can be registered on them, not even manually."""
    returns, n = played.returns, len(played.returns)
    seeds = f"seeds {seed}..{seed + n - 1}"
    bad = [r for r in returns if not math.isfinite(r)]
    if bad or n < MIN_EPISODES:
        what = f"{len(bad)} of {n} episode returns are not finite (e.g. {bad[0]})" if bad else f"only {n} episode(s)"
        return _failed(f"re-evaluation on {seeds}: {what}; no lower confidence bound can be stated")
    mean, std = _mean_std(returns)
    lcb = stats.lower_confidence_bound(mean, stats.sample_sd(std, n), n, CONFIDENCE)
    if not all(math.isfinite(x) for x in (mean, std, lcb)):
        return _failed(f"re-evaluation on {seeds}: the returns are too large to summarize in finite numbers "
                       f"(mean {mean}, std {std})")
    thr = info.reward_threshold if info.reward_threshold is not None and math.isfinite(info.reward_threshold) else None
    summary = EvaluationSummary(episodes=n, seed=seed, return_mean=mean, return_std=std, return_min=min(returns),
                                return_max=max(returns), lower_bound=lcb, confidence=CONFIDENCE, threshold=thr,
                                checkpoint_env_steps=played.checkpoint_env_steps)
    stated = f"mean {mean:.4g} +- {std:.3g} over {n} episodes ({seeds}), {CONFIDENCE:.0%} lower bound {lcb:.4g}"
    if thr is None:
        return Reevaluation(summary, PolicyCheck(name="evaluation", passed=False,
                                                 detail=f"{stated}; the run has no finite reward threshold to reach"))
    ok = mean >= thr
    return Reevaluation(summary, PolicyCheck(name="evaluation", passed=ok,
                                             detail=f"{stated}; {'>=' if ok else 'below'} threshold {thr:g}"))


def reevaluate(checkpoint: Path, info: rf.RunInfo, episodes: int, seed: int) -> Reevaluation:
    """Evaluate the (staged) checkpoint over ``episodes`` fresh episodes; the check is mean >= threshold."""
    try:
        played = run_episodes(checkpoint, info, episodes, seed)
    except EnvModuleError:
        raise  # a flag this command lacks (--env-package/--env-class) decides nothing about the policy
    except (ValueError, OSError) as exc:
        return _failed(f"re-evaluation failed: {exc}")
    return summarize(played, info, seed)


def check_reason(approve_manually: bool, reason: str | None) -> str | None:
    """The reason, stripped; ValueError when a manual approval has none or one is too long."""
    text = (reason or "").strip()
    if approve_manually and not text:
        raise ValueError("a manual approval needs --reason TEXT saying why the policy's verdict is overridden")
    if len(text) > MAX_REASON_CHARS:
        raise ValueError(f"--reason is at most {MAX_REASON_CHARS} characters, got {len(text)}")
    return text or None


def promote(runs_dir: Path | str | None, run: str, episodes: int = DEFAULT_EPISODES, approve_manually: bool = False,
            reason: str | None = None, actor: str = "cli") -> Decision:
    """Apply the policy to run ``run``'s best checkpoint and record the decision (approved,
    rejected or manual_approval). ValueError, with the reason, when nothing can be decided (unknown
    run, bad arguments, a manual approval without a checkpoint to register)."""
    episodes = check_episodes(episodes)
    reason = check_reason(approve_manually, reason)
    store = RunStore(runs_dir)
    run_dir = store.resolve(run)
    refuse_live(store, run_dir, "be promoted")  # nothing is recorded about a run that has not finished
    info = store.info(run_dir)
    checks = [check_solved(info), check_diagnosis(store, run_dir)]
    stage: Path | None = None
    evaluation = None
    try:
        try:
            stage = reg.stage_checkpoint(runs_dir, run_dir, info.env_id)
            checks.append(PolicyCheck(name="checkpoint", passed=True, detail="best checkpoint copied for evaluation"))
        except (ValueError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            checks.append(PolicyCheck(name="checkpoint", passed=False, detail=f"no readable best checkpoint: {why}"))
        if stage is not None:
            seed = reg.allocate_eval_seeds(runs_dir, info.env_id, run_dir.name)
            re_eval = reevaluate(reg.staged_checkpoint(stage), info, episodes, seed)
            evaluation = re_eval.summary
            checks.append(re_eval.check)
        failed = [c.name for c in checks if not c.passed]
        if not failed:
            kind = DecisionKind.APPROVED
        elif approve_manually:
            if stage is None or evaluation is None:
                raise ValueError(f"run {run_dir.name} cannot be approved manually: it has no best checkpoint that "
                                 "loads and evaluates (see the checkpoint/evaluation checks)")
            kind = DecisionKind.MANUAL_APPROVAL
        else:
            kind = DecisionKind.REJECTED
        decision = Decision(seq=0, time="", env_id=info.env_id, kind=kind, run_id=run_dir.name,
                            config_id=info.config_id, algo=info.algo, checkpoint=rf.BEST_CHECKPOINT, checks=checks,
                            failed_checks=failed, evaluation=evaluation, reason=reason, actor=actor)
        recorded = reg.record_decision(runs_dir, decision, stage if kind != DecisionKind.REJECTED else None)
        stage = None if kind != DecisionKind.REJECTED else stage
        return recorded
    finally:
        reg.cleanup_stage(stage)


def describe(decision: Decision) -> str:
    """One line for a person."""
    d = decision
    if d.kind == DecisionKind.ROLLBACK:
        return f"{d.env_id}: rolled back from v{d.current_before} to v{d.version} (run {d.run_id})"
    ev = d.evaluation
    bound = "undefined" if ev is None or ev.lower_bound is None else f"{ev.lower_bound:.4g}"
    e = (f"; re-evaluation mean {ev.return_mean:.4g} over {ev.episodes} episodes, {ev.confidence:.0%} lower bound "
         f"{bound}, threshold {'-' if ev.threshold is None else f'{ev.threshold:g}'}") if ev else ""
    if d.kind == DecisionKind.APPROVED:
        return f"approved: run {d.run_id} is {d.env_id} v{d.version} (current){e}"
    if d.kind == DecisionKind.MANUAL_APPROVAL:
        return (f"approved manually: run {d.run_id} is {d.env_id} v{d.version} (current) although "
                f"{', '.join(d.failed_checks)} failed; reason: {d.reason}{e}")
    return f"rejected: run {d.run_id} is not registered; failed: {', '.join(d.failed_checks)}{e}"
