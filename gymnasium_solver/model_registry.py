"""The model registry's storage: versions of a policy per environment, and every decision about them.

Layout, inside the runs folder (hidden, so it is never listed as a run)::

    .registry/<ENV>/decisions.jsonl   one Decision per line, appended under a file lock, never rewritten
    .registry/<ENV>/v<N>/             a copy of the promoted checkpoint, so deleting the run keeps the model:
        checkpoints/best.pt, checkpoints/best.json, run.json, config.yaml
    .registry/<ENV>/.lock             the lock every writer holds while it numbers and appends

The registry's state (which versions exist, which one is current) is a replay of the decisions:
an approval (by the policy or manual) adds version N and makes it current; a rollback makes an
earlier approved version current. Rejections are recorded with the failing checks and add nothing.

This module only stores and reads; the promotion policy (which needs torch to re-evaluate) is
:mod:`gymnasium_solver.promotion`. No torch here.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple, TypeVar

from pydantic import BaseModel, Field

from gymnasium_solver import run_folder as rf

REGISTRY_DIR = ".registry"
DECISIONS_FILE = "decisions.jsonl"
LOCK_FILE = ".lock"
STAGING_PREFIX = ".staging-"
MODEL_REF_PREFIX = "model:"
LOCK_TIMEOUT_SECONDS = 60.0
MAX_RECENT_DECISIONS = 20
_ENV_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,127}$")
_T = TypeVar("_T")


class DecisionKind(StrEnum):
    APPROVED = "approved"  # the policy passed
    REJECTED = "rejected"  # the policy failed (the failing checks are recorded); nothing registered
    MANUAL_APPROVAL = "manual_approval"  # the policy failed, a person approved it from the CLI with a reason
    ROLLBACK = "rollback"  # an earlier approved version was made current again


APPROVALS = (DecisionKind.APPROVED, DecisionKind.MANUAL_APPROVAL)


class PolicyCheck(BaseModel):
    name: str = Field(description="solved, diagnosis, checkpoint or evaluation")
    passed: bool
    detail: str = Field(description="what was found, in a sentence")


class EvaluationSummary(BaseModel):
    """The fresh re-evaluation of the checkpoint a promotion considered."""

    episodes: int
    seed: int = Field(description="seed of the first episode; episodes use fresh seeds, never the training evals'")
    return_mean: float
    return_std: float = Field(description="population std of the episode returns")
    return_min: float
    return_max: float
    lower_bound: float = Field(description="one-sided lower confidence bound of the mean return (Student t)")
    confidence: float = Field(description="confidence of lower_bound, e.g. 0.95")
    threshold: float | None = Field(description="the run's reward threshold the mean must reach")
    checkpoint_env_steps: int


class Decision(BaseModel):
    """One line of decisions.jsonl."""

    seq: int = Field(description="1-based position in the environment's decision log")
    time: str
    env_id: str
    kind: DecisionKind
    version: int | None = Field(default=None, description="the version registered (approvals) or made current (rollback)")
    current_before: int | None = None
    current_after: int | None = None
    run_id: str | None = None
    config_id: str | None = None
    algo: str | None = None
    checkpoint: str | None = Field(default=None, description="the run's checkpoint considered (best)")
    checks: list[PolicyCheck] = Field(default_factory=list)
    failed_checks: list[str] = Field(default_factory=list)
    evaluation: EvaluationSummary | None = None
    reason: str | None = Field(default=None, description="why a person approved it manually, or rolled back")
    actor: str = Field(default="cli", description="cli or mcp")
    model_path: str | None = Field(default=None, description="the registered checkpoint, relative to the runs folder")
    sha256: str | None = None


class ModelVersion(BaseModel):
    env_id: str
    version: int
    current: bool
    kind: DecisionKind = Field(description="approved (by the policy) or manual_approval")
    run_id: str | None
    config_id: str | None
    algo: str | None
    time: str
    evaluation: EvaluationSummary | None
    reason: str | None = None
    model_ref: str = Field(description="pass to `gsolve eval`, e.g. model:CartPole-v1@3")
    model_path: str | None


class ModelList(BaseModel):
    env_id: str | None = Field(description="the environment asked for; null = every environment")
    models: list[ModelVersion]
    current: dict[str, int | None] = Field(description="environment -> current version")
    recent_decisions: list[Decision] = Field(default_factory=list,
                                             description=f"with env_id: its last {MAX_RECENT_DECISIONS} decisions")
    note: str | None = None


class RegistryState(NamedTuple):
    versions: dict[int, Decision]  # version -> the approval that registered it
    current: int | None


# ---------------------------------------------------------------------------------------------
# where things are
# ---------------------------------------------------------------------------------------------
def check_env_id(env_id: str) -> str:
    """``env_id`` if it can name a registry folder (a Gymnasium id such as CartPole-v1 or ALE/Pong-v5)."""
    if not isinstance(env_id, str) or not _ENV_ID.match(env_id) or ".." in env_id or env_id.endswith("/"):
        raise ValueError(f"{env_id!r} is not an environment id such as CartPole-v1 (letters, digits, '-', '_', '.', '/')")
    return env_id


def registry_root(runs_dir: Path | str | None) -> Path:
    return rf.resolve_runs_dir(runs_dir) / REGISTRY_DIR


def env_dir(runs_dir: Path | str | None, env_id: str) -> Path:
    """The registry folder of one environment ('/' in ids like ALE/Pong-v5 becomes '+')."""
    return registry_root(runs_dir) / check_env_id(env_id).replace("/", "+")


def registered_envs(runs_dir: Path | str | None) -> list[str]:
    """Environments that have a decision log, sorted."""
    try:
        names = sorted(p.name for p in registry_root(runs_dir).iterdir() if (p / DECISIONS_FILE).is_file())
    except OSError:
        return []
    return [n.replace("+", "/") for n in names]


def _unknown_env(runs_dir: Path | str | None, env_id: str) -> ValueError:
    envs = registered_envs(runs_dir)
    if not envs:
        return ValueError(f"no model is registered for {env_id} (the registry is empty); promote a solved run with "
                          "`gsolve promote RUN`")
    close = difflib.get_close_matches(env_id, envs, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return ValueError(f"no model is registered for {env_id}; {hint}registered environments: {', '.join(envs)}")


# ---------------------------------------------------------------------------------------------
# the decision log
# ---------------------------------------------------------------------------------------------
def read_decisions(runs_dir: Path | str | None, env_id: str) -> list[Decision]:
    """Every decision of ``env_id``, oldest first ([] if none). A torn last line (a writer died
    mid-append) and lines that do not parse are skipped: they never held a complete decision."""
    path = env_dir(runs_dir, env_id) / DECISIONS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n") or not line.strip():
            continue
        try:
            out.append(Decision.model_validate_json(line))
        except ValueError:
            continue
    return out


def replay(decisions: list[Decision]) -> RegistryState:
    """The versions and the current version the decisions lead to."""
    versions: dict[int, Decision] = {}
    current: int | None = None
    for d in decisions:
        if d.kind in APPROVALS and d.version is not None:
            versions[d.version] = d
            current = d.version
        elif d.kind == DecisionKind.ROLLBACK:
            current = d.current_after
    return RegistryState(versions, current)


def with_lock(runs_dir: Path | str | None, env_id: str, fn: Callable[[Path], _T]) -> _T:
    """Run ``fn(env_dir)`` holding the environment's registry lock (a file lock, so concurrent
    `gsolve promote` processes number and append their decisions one after the other)."""
    from filelock import FileLock, Timeout

    folder = env_dir(runs_dir, env_id)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(folder / LOCK_FILE), timeout=LOCK_TIMEOUT_SECONDS):
            return fn(folder)
    except Timeout:
        raise ValueError(f"the registry of {env_id} is locked by another promote or rollback for over "
                         f"{LOCK_TIMEOUT_SECONDS:g} s; retry when it is done") from None


def _append(folder: Path, decision: Decision) -> None:
    """Append one line and make it durable. A torn line left by a crashed writer is closed first, so
    it stays one unreadable line instead of swallowing this one."""
    path = folder / DECISIONS_FILE
    with open(path, "ab") as f:
        if f.tell() > 0:
            with open(path, "rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    f.write(b"\n")
        f.write(decision.model_dump_json().encode("utf-8") + b"\n")
        f.flush()
        os.fsync(f.fileno())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stage_checkpoint(runs_dir: Path | str | None, run_dir: Path, env_id: str, name: str = rf.BEST_CHECKPOINT) -> Path:
    """Copy a run's checkpoint (and its run.json, config.yaml) into a private staging folder of the
    registry, so what is evaluated is exactly what gets registered even if the run changes or is
    deleted meanwhile. Returns the staging folder; its checkpoint is ``checkpoints/<name>.pt``."""
    folder = env_dir(runs_dir, env_id)
    folder.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    (stage / rf.CHECKPOINTS_DIR).mkdir()
    try:
        for rel in (f"{rf.CHECKPOINTS_DIR}/{name}{rf.CHECKPOINT_SUFFIX}", f"{rf.CHECKPOINTS_DIR}/{name}{rf.CHECKPOINT_META_SUFFIX}",
                    rf.RUN_JSON, rf.CONFIG_YAML):
            src = run_dir / rel
            if src.is_symlink():
                raise ValueError(f"run {run_dir.name}: {rel} is a symbolic link, which is never followed")
            if rel.endswith(rf.CHECKPOINT_SUFFIX) or src.exists():
                shutil.copyfile(src, stage / rel)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def staged_checkpoint(stage: Path, name: str = rf.BEST_CHECKPOINT) -> Path:
    return stage / rf.CHECKPOINTS_DIR / f"{name}{rf.CHECKPOINT_SUFFIX}"


def record_decision(runs_dir: Path | str | None, decision: Decision, stage: Path | None) -> Decision:
    """Append ``decision`` (its seq, time and versions filled in here, under the lock). For an
    approval the staged checkpoint becomes version N = highest + 1 and current; otherwise the
    staging folder is removed. Returns the decision as recorded."""
    root = rf.resolve_runs_dir(runs_dir)

    def write(folder: Path) -> Decision:
        decisions = read_decisions(runs_dir, decision.env_id)
        state = replay(decisions)
        d = decision.model_copy(update={"seq": len(decisions) + 1, "time": rf.utc_now_iso(),
                                        "current_before": state.current, "current_after": state.current})
        if d.kind in APPROVALS:
            if stage is None:
                raise ValueError("an approval needs the staged checkpoint to register")
            version = max(state.versions, default=0) + 1
            target = folder / f"v{version}"
            os.replace(stage, target)  # atomic: the version folder appears whole
            model = staged_checkpoint(target)
            d = d.model_copy(update={"version": version, "current_after": version,
                                     "model_path": str(model.relative_to(root)), "sha256": _sha256(model)})
        elif stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        _append(folder, d)
        return d

    return with_lock(runs_dir, decision.env_id, write)


def rollback(runs_dir: Path | str | None, env_id: str, reason: str | None = None, actor: str = "cli") -> Decision:
    """Make the approved version before the current one current again, and record it."""
    if not read_decisions(runs_dir, env_id):
        raise _unknown_env(runs_dir, env_id)

    def write(folder: Path) -> Decision:
        decisions = read_decisions(runs_dir, env_id)
        state = replay(decisions)
        earlier = [v for v in state.versions if state.current is not None and v < state.current]
        if not earlier:
            have = ", ".join(f"v{v}" for v in sorted(state.versions)) or "none"
            raise ValueError(f"{env_id} has no approved version before the current one (v{state.current}) to roll back "
                             f"to; its versions: {have}")
        target = max(earlier)
        d = Decision(seq=len(decisions) + 1, time=rf.utc_now_iso(), env_id=env_id, kind=DecisionKind.ROLLBACK,
                     version=target, current_before=state.current, current_after=target, reason=reason, actor=actor,
                     run_id=state.versions[target].run_id, config_id=state.versions[target].config_id,
                     algo=state.versions[target].algo, model_path=state.versions[target].model_path,
                     sha256=state.versions[target].sha256)
        _append(folder, d)
        return d

    return with_lock(runs_dir, env_id, write)


def cleanup_stage(stage: Path | None) -> None:
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# reading: versions and model references
# ---------------------------------------------------------------------------------------------
def _version(env_id: str, d: Decision, current: int | None) -> ModelVersion:
    assert d.version is not None
    return ModelVersion(env_id=env_id, version=d.version, current=d.version == current, kind=d.kind, run_id=d.run_id,
                        config_id=d.config_id, algo=d.algo, time=d.time, evaluation=d.evaluation, reason=d.reason,
                        model_ref=f"{MODEL_REF_PREFIX}{env_id}@{d.version}", model_path=d.model_path)


def list_models(runs_dir: Path | str | None, env_id: str | None = None) -> ModelList:
    """Registered versions (newest first) of one environment, or of all; the current one marked."""
    if env_id is not None:
        decisions = read_decisions(runs_dir, env_id)
        if not decisions:
            raise _unknown_env(runs_dir, env_id)
        envs = [env_id]
    else:
        envs = registered_envs(runs_dir)
    models, current = [], {}
    recent: list[Decision] = []
    for env in envs:
        decisions = read_decisions(runs_dir, env)
        state = replay(decisions)
        current[env] = state.current
        models += [_version(env, state.versions[v], state.current) for v in sorted(state.versions, reverse=True)]
        if env_id is not None:
            recent = decisions[-MAX_RECENT_DECISIONS:]
    note = None
    if not envs:
        note = "no model is registered yet; promote a solved run with `gsolve promote RUN` (or promote_run)"
    elif not models:
        note = "decisions were recorded but none approved a version; recent_decisions says which checks failed"
    return ModelList(env_id=env_id, models=models, current=current, recent_decisions=recent, note=note)


def is_model_ref(ref: str) -> bool:
    return isinstance(ref, str) and ref.startswith(MODEL_REF_PREFIX)


class ResolvedModel(NamedTuple):
    version: ModelVersion
    checkpoint: Path


def resolve_model(runs_dir: Path | str | None, ref: str) -> ResolvedModel:
    """``model:ENV`` (the current version) or ``model:ENV@N`` to its registered checkpoint file."""
    body = ref[len(MODEL_REF_PREFIX):] if is_model_ref(ref) else ref
    env_id, _, ver = body.partition("@")
    if not env_id:
        raise ValueError(f"{ref!r} is not a model reference; use model:ENV or model:ENV@VERSION, e.g. model:CartPole-v1@2")
    decisions = read_decisions(runs_dir, env_id)
    if not decisions:
        raise _unknown_env(runs_dir, env_id)
    state = replay(decisions)
    if ver:
        if not ver.isdigit():
            raise ValueError(f"{ref!r}: the version after '@' must be a number such as 2")
        number = int(ver)
    elif state.current is None:
        raise ValueError(f"{env_id} has no current version: no promotion was approved yet (`gsolve models {env_id}`)")
    else:
        number = state.current
    if number not in state.versions:
        have = ", ".join(str(v) for v in sorted(state.versions)) or "none"
        raise ValueError(f"{env_id} has no version {number}; its versions: {have} (`gsolve models {env_id}`)")
    d = state.versions[number]
    path = env_dir(runs_dir, env_id) / f"v{number}" / rf.CHECKPOINTS_DIR / f"{rf.BEST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}"
    if not path.is_file() or path.is_symlink():
        raise ValueError(f"{MODEL_REF_PREFIX}{env_id}@{number}: its checkpoint {path} is missing or not a regular file; "
                         "the registry folder was edited by hand")
    return ResolvedModel(_version(env_id, d, state.current), path)


def decision_to_json(decision: Decision) -> str:
    return json.dumps(decision.model_dump(mode="json"), indent=2)
