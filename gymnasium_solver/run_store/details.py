"""Everything about one run on a screen: its files, hyperparameters and differences from its preset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store.files import RunFileError, regular_file_size
from gymnasium_solver.run_store.store import RunStore
from gymnasium_solver.run_store.summaries import EvalSummary, RunSummary, summarize_run

# The hyperparameters shown in summaries; config.yaml has every field (get_config / the resource).
# Which of them a run shows comes from the Config fields' own declaration (config.applies_to).
KEY_HYPERPARAMETERS = (
    "n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda",
    "clip_range", "ent_coef", "vf_coef", "max_grad_norm", "target_kl", "adaptive_lr_kl", "hidden_sizes",
    "normalize_observations", "reward_scale", "log_std_init", "use_sde", "sde_sample_freq", "episodes_per_update",
    "use_baseline", "buffer_size", "learning_starts", "train_freq", "gradient_steps", "target_update_interval",
    "exploration_fraction", "exploration_final_eps", "tau", "seed",
)  # fmt: skip


def key_hyperparameters(config: dict[str, Any], action_kind: str | None = None) -> dict[str, Any]:
    """The KEY_HYPERPARAMETERS of a config that mean something for its algorithm and action space."""
    algo = config.get("algo")
    return {k: config[k] for k in KEY_HYPERPARAMETERS
            if k in config and config_mod.applies_to(k, algo if isinstance(algo, str) else None, action_kind)}



class FileState(BaseModel):
    name: str
    present: bool
    bytes: int | None = None
    problem: str | None = None


class PresetDifference(BaseModel):
    value: Any = Field(description="this run's value")
    preset: Any = Field(description="the preset's value")


class RunDetails(BaseModel):
    """Everything about one run that fits on a screen: summary, hyperparameters, failure, files."""

    summary: RunSummary
    variant: str | None = None
    seed: int | None = None
    finished_at: str | None = None
    updated_at: str | None = None
    wall_seconds: float | None = None
    iteration: int | None = None
    failure: dict[str, Any] | None = Field(default=None, description="structured failure (kind, message, where)")
    best_eval: EvalSummary | None = None
    final_eval: EvalSummary | None = None
    solved_at: rf.SolvedAt | None = Field(default=None, description="the evaluation that solved the run, and the "
                                          "confirmation episodes it was checked on (confirm_episodes 0: not checked)")
    hyperparameters: dict[str, Any] = Field(
        default_factory=dict, description="key hyperparameters that apply to this run; get_config has every field"
    )
    preset: str | None = Field(
        default=None, description="the ENV:VARIANT preset compared against, or why there is no comparison"
    )
    differences_from_preset: dict[str, PresetDifference] = Field(
        default_factory=dict,
        description="every config key whose value differs from the preset as this machine has it now",
    )
    overrides: dict[str, Any] = Field(default_factory=dict, description="--set overrides given at start")
    parent_run_id: str | None = None
    applied_changes: dict[str, Any] = Field(default_factory=dict)
    sweep_id: str | None = Field(default=None, description="the sweep this run is a trial of (get_sweep)")
    trial_number: int | None = Field(default=None, description="its trial number in that sweep")
    action_space: dict[str, Any] | None = None
    observation_shape: list[int] | None = None
    metrics_rows: int | None = None
    files: list[FileState]
    versions: dict[str, str] = Field(default_factory=dict)
    source: rf.ImportSource | None = Field(
        default=None, description="for a run imported from another framework: where from, the metric-name "
        "mapping, and 'unknown': the fields the source does not record and what was done instead")
    read_only: bool = Field(default=False, description="true for imported runs: no resume, retry or fix")
    warnings: list[rf.RunWarning] = Field(
        default_factory=list, description="problems that did not end the run (e.g. a tracking sink switched off, a "
        "config that discards samples: kind config_wastes_samples, source the key)")


def _eval(e: rf.EvalRecord | None) -> EvalSummary | None:
    if e is None:
        return None
    return EvalSummary(return_mean=e.return_mean, return_std=e.return_std, env_steps=e.env_steps, wall_seconds=e.wall_seconds)


def preset_comparison(config: dict[str, Any], config_id: str | None) -> tuple[str, dict[str, PresetDifference]]:
    """(preset, differences): the ENV:VARIANT a run's config came from and every key that differs
    from it (config.preset_differences, as the diagnosis uses), or a sentence saying why not."""
    if config.get("env_id") and config.get("variant"):
        config_id = f"{config['env_id']}:{config['variant']}"
    if not config or config_id is None:
        return "no comparison: the run's config.yaml is missing or unreadable", {}
    reference = config_mod.preset_config(config_id)
    if reference is None:
        return (f"no comparison: this machine has no preset {config_id} (the run's own settings: its config.yaml, "
                "or get_config(run_id=...) over MCP)"), {}
    diffs = config_mod.preset_differences(config, reference)
    return config_id, {k: PresetDifference(value=v, preset=p) for k, (v, p) in diffs.items()}


_DETAIL_FILES = (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV, rf.RUN_LOG)


def run_details(store: RunStore, run_dir: Path) -> RunDetails:
    """A RunDetails for one run, memoised until one of its files changes (or a live run's status
    does: a run whose heartbeat stopped turns 'crashed' without any file changing). Unreadable files
    are reported in ``files``, never raised. Shared between callers: read it, do not change it."""
    try:
        status: str = store.status(run_dir)
    except RunFileError:
        status = "unreadable"
    return store.memo(run_dir, ("details", status), lambda: _run_details(store, run_dir), files=_DETAIL_FILES)


def _run_details(store: RunStore, run_dir: Path) -> RunDetails:
    files: list[FileState] = []
    config: dict[str, Any] = {}
    rows: int | None = None
    for name in _DETAIL_FILES:
        st = FileState(name=name, present=False)
        try:
            st.bytes = regular_file_size(run_dir, name)
            st.present = st.bytes is not None
            if name == rf.RUN_JSON:
                store.info(run_dir)
            elif name == rf.CONFIG_YAML:
                config = store.config(run_dir)
            elif name == rf.METRICS_CSV:
                rows = store.metric_rows(run_dir)
        except RunFileError as exc:
            st.problem = str(exc)
        files.append(st)
    summary = summarize_run(store, run_dir)
    info = None if summary.problem else store.info(run_dir)
    kind = None if info is None or info.action_space is None else info.action_space.kind
    preset, differences = preset_comparison(config, summary.config_id)
    details = RunDetails(summary=summary, files=files, metrics_rows=rows, preset=preset,
                         hyperparameters=key_hyperparameters(config, kind), differences_from_preset=differences)
    if info is None:
        return details
    steps = store.env_steps(run_dir)  # the figure diagnose and the live status use too
    if steps != summary.env_steps:
        summary.env_steps = steps
        summary.progress = round(min(steps / info.max_env_steps, 1.0), 4) if info.max_env_steps else None
    details.variant, details.seed = info.variant, info.seed
    details.finished_at, details.updated_at = info.finished_at, info.updated_at
    details.wall_seconds, details.iteration = info.progress.wall_seconds, info.progress.iteration
    details.solved_at = info.solved_at
    if info.failure is not None:
        details.failure = info.failure.model_dump()
        if len(info.failure.message) > 2000:  # a traceback can be long; get_run_logs has it all
            details.failure["message"] = info.failure.message[:2000] + " [...] (see get_run_logs)"
    details.best_eval, details.final_eval = _eval(info.best_eval), _eval(info.last_eval)
    details.overrides, details.parent_run_id = info.overrides, info.parent_run_id
    details.applied_changes = info.applied_changes
    details.sweep_id, details.trial_number = info.sweep_id, info.trial_number
    details.action_space = None if info.action_space is None else info.action_space.model_dump(exclude_none=True)
    details.observation_shape, details.versions = info.observation_shape, info.versions
    details.source, details.read_only = info.source, info.read_only
    details.warnings = list(info.warnings)
    if info.source is not None:
        details.preset = f"no comparison: imported from {info.source.framework} ({info.source.kind}), not from a preset"
    return details

