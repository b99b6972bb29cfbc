"""The sweep's Optuna study: opening it in its RDB storage, the objective's value, and a trial's record.

The objective is minimised. A solved trial's value is its env steps to solve (objective ``steps``)
or its trainer seconds to solve (``wall``). An unsolved trial's value is ``UNSOLVED_BASE`` minus its
best evaluation return, so every unsolved trial ranks after every solved one, and among themselves
by best eval: a sweep in which no trial solves still names the one that came closest. Intermediate values, reported at each evaluation for the
pruner, are the negated best evaluation return so far (also lower-is-better), at a step that is the
evaluation's env steps in units of the base config's ``eval_freq`` (so trials with different
rollout sizes compare at the same step). Optuna is imported lazily: the MCP server loads this
module only when a sweep tool is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf

if TYPE_CHECKING:
    import optuna

    from gymnasium_solver.sweeps.record import SweepRecord

UNSOLVED_BASE = 1e12  # above any env-step count (config bound 1e9) or trainer seconds
NO_EVAL_VALUE = UNSOLVED_BASE + 1e9  # an unsolved trial without a single evaluation ranks last
PRUNER_STARTUP_TRIALS = 4  # the median pruner compares only once this many trials completed
PRUNER_WARMUP_STEPS = 1  # ... and never at the first eval_freq interval

TrialOutcome = Literal["running", "solved", "not_solved", "pruned", "failed", "interrupted"]


class TrialResult(BaseModel):
    """What a finished (or running) trial achieved, as kept in the study's trial user attributes."""

    run_id: str | None = None
    outcome: TrialOutcome = "running"
    detail: str = ""
    env_steps: int = 0
    seconds: float | None = Field(default=None, description="trainer seconds to solve when solved, else run")
    solved_at_env_steps: int | None = None
    best_eval: float | None = None
    run_ids: list[str] = Field(default_factory=list, description="one run per seed (--seeds-per-trial)")
    seeds_solved: int | None = Field(default=None, description="with several seeds: how many solved")
    seeds_run: int | None = Field(default=None, description="with several seeds: how many ran")


def load_optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise ValueError("sweeps need Optuna: pip install 'gymnasium-solver[sweep]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def storage_for(url: str) -> optuna.storages.RDBStorage:
    """Optuna's RDB storage at ``url``; a sentence when the URL or the database is unusable."""
    optuna = load_optuna()
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs=_engine_kwargs(url))
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy raises many types for a bad URL or database
        raise ValueError(f"cannot open the sweep storage {url!r}: {type(exc).__name__}: {exc}. "
                         f"Give an SQLAlchemy URL such as sqlite:////abs/path/sweeps.db or "
                         f"postgresql://user@host/db (its driver installed)") from None


def _engine_kwargs(url: str) -> dict[str, Any]:
    # SQLite: wait for a concurrent writer (get_sweep reading while the coordinator tells) instead of failing.
    return {"connect_args": {"timeout": 30}} if url.startswith("sqlite") else {}


def open_study(record: SweepRecord, *, create: bool, pruner: optuna.pruners.BasePruner | None = None) -> optuna.Study:
    """The sweep's study (study name = sweep id), with a TPE sampler and (unless given) a median pruner."""
    optuna = load_optuna()
    storage = storage_for(record.storage)
    sampler = optuna.samplers.TPESampler(seed=record.sampler_seed, constant_liar=record.parallel > 1,
                                         n_startup_trials=min(10, max(2, record.n_trials // 4)))
    if pruner is None:
        pruner = optuna.pruners.MedianPruner(n_startup_trials=PRUNER_STARTUP_TRIALS,
                                             n_warmup_steps=PRUNER_WARMUP_STEPS)
    if create:
        return optuna.create_study(study_name=record.sweep_id, storage=storage, sampler=sampler, pruner=pruner,
                                   direction="minimize", load_if_exists=True)
    try:
        return optuna.load_study(study_name=record.sweep_id, storage=storage, sampler=sampler, pruner=pruner)
    except KeyError:
        raise ValueError(f"sweep {record.sweep_id}: its study is not in {record.storage} (was the database "
                         f"moved or deleted?)") from None


def solved_value(objective: str, info: rf.RunInfo) -> float:
    assert info.solved_at is not None
    return float(info.solved_at.env_steps) if objective == "steps" else float(info.solved_at.wall_seconds)


def unsolved_value(best_eval: float | None) -> float:
    return NO_EVAL_VALUE if best_eval is None else UNSOLVED_BASE - best_eval


def measured_value(value: float | None) -> float | None:
    """A trial's value as a figure someone measured (env steps or seconds to solve); None for the ranking penalty
    of a trial that never solved (:func:`unsolved_value`), whose figure is its best evaluation."""
    return None if value is None or value >= UNSOLVED_BASE / 2 else value


def result_of(trial: optuna.trial.FrozenTrial) -> TrialResult:
    """The trial's result from its user attributes (written by the coordinator)."""
    attrs = trial.user_attrs.get("result")
    if isinstance(attrs, dict):
        try:
            return TrialResult.model_validate(attrs)
        except ValueError:
            pass
    return TrialResult(outcome="running" if trial.state.name == "RUNNING" else "failed",
                       detail="" if trial.state.name == "RUNNING" else "no result recorded")


def counts_toward_total(trial: optuna.trial.FrozenTrial) -> bool:
    """Finished trials count toward --trials; ones interrupted by a crash or a stop are re-run on resume."""
    if trial.state.name in ("COMPLETE", "PRUNED"):
        return True
    return trial.state.name == "FAIL" and result_of(trial).outcome != "interrupted"


def on_eval_schedule(row_env_steps: list[int], eval_env_steps: int, eval_freq: int) -> bool:
    """Whether an evaluation at ``eval_env_steps`` was a scheduled one: the trainer evaluates at the
    first iteration at or past each multiple of ``eval_freq`` (training.maybe_evaluate), so its row
    crossed a multiple since the previous row. A graceful stop's extra final evaluation usually did not."""
    rows = [i for i, s in enumerate(row_env_steps) if s == eval_env_steps]
    if not rows or eval_freq < 1:
        return False
    before = row_env_steps[rows[0] - 1] if rows[0] > 0 else 0
    return eval_env_steps // eval_freq > before // eval_freq
