"""The model registry's storage: versions of a policy per environment, and every decision about them.

Layout, inside the runs folder (hidden, so it is never listed as a run)::

    .registry/<ENV>/decisions.jsonl   one Decision per line, appended under a file lock, never rewritten
    .registry/<ENV>/v<N>/             a copy of the promoted checkpoint, so deleting the run keeps the model:
        checkpoints/best.pt, checkpoints/best.json, run.json, config.yaml
    .registry/<ENV>/eval_seeds.jsonl  one line per re-evaluation: the block of fresh seeds it was given
    .registry/<ENV>/.lock             the lock every writer holds while it numbers and appends

The registry's state (which versions exist, which one is current) is a replay of the decisions:
an approval (by the policy or manual) adds version N and makes it current; a rollback makes an
earlier approved version current. Rejections are recorded with the failing checks and add nothing.

The log only holds what its reader reads back (issue 26: a 1-episode promotion once wrote a lower
bound of -inf as null, the reader skipped that line, and the registry broke for good). So every
line is parsed back by the reader's own parser before it is appended; non-finite numbers are
refused; the reader names each line it cannot read instead of skipping it; and sequence and
version numbers come from every line and folder present, readable or not, so they never collide.

This module only stores and reads; the promotion policy (which needs torch to re-evaluate) is
:mod:`gymnasium_solver.ops.promotion`. No torch here.
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
from pathlib import Path
from typing import NamedTuple, TypeVar

from pydantic import BaseModel, Field

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.ops.registry_records import (
    APPROVALS,
    MAX_EPISODES,
    Decision,
    DecisionKind,
    EvaluationSummary,
    caveat,
    claimed,
    parse_line,
    readable_line,
    why,
)

REGISTRY_DIR = ".registry"
DECISIONS_FILE = "decisions.jsonl"
SEEDS_FILE = "eval_seeds.jsonl"
LOCK_FILE = ".lock"
STAGING_PREFIX = ".staging-"
MODEL_REF_PREFIX = "model:"
LOCK_TIMEOUT_SECONDS = 60.0
MAX_RECENT_DECISIONS = 20
_ENV_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,127}$")
_T = TypeVar("_T")

# Re-evaluation seeds: far from training (seed + n), its evaluations (seed + 1_000_000 + ...) and
# resumes (+ 2_000_000 + ...); block k of an environment is seeds OFFSET + k*MAX_EPISODES onwards.
REEVAL_SEED_OFFSET = 5_000_000


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
    log_notes: list[str] = Field(default_factory=list, description="decision-log lines that could not be read (file, "
                                 "line and why) or were read with a caveat; empty when the log reads back whole")
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


def _has_log(runs_dir: Path | str | None, env_id: str) -> bool:
    return (env_dir(runs_dir, env_id) / DECISIONS_FILE).is_file()


def _unknown_env(runs_dir: Path | str | None, env_id: str) -> ValueError:
    envs = registered_envs(runs_dir)
    if not envs:
        return ValueError(f"no model is registered for {env_id} (the registry is empty); promote a solved run with "
                          "`gsolve promote RUN`")
    close = difflib.get_close_matches(env_id, envs, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return ValueError(f"no model is registered for {env_id}; {hint}environments with promotion decisions (approved "
                      f"or not): {', '.join(envs)}")


# ---------------------------------------------------------------------------------------------
# the decision log
# ---------------------------------------------------------------------------------------------
class DecisionLog(NamedTuple):
    decisions: list[Decision]  # every line that reads back as a decision, oldest first
    notes: list[str]  # every line not read (file, line, why) or read with a caveat
    last_seq: int  # the highest seq any line holds or claims, readable or not (else its line number)
    last_version: int  # the highest version any line holds or claims, readable or not
    unread: int  # lines not read (their decisions are missing from the replay)


def read_log(runs_dir: Path | str | None, env_id: str) -> DecisionLog:
    """Every decision of ``env_id``, oldest first, and a note for every line that was not read (a
    torn line of a writer that died mid-append, a hand edit) or was read with a caveat."""
    path = env_dir(runs_dir, env_id) / DECISIONS_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return DecisionLog([], [], 0, 0, 0)
    shown = f"{REGISTRY_DIR}/{path.parent.name}/{DECISIONS_FILE}"
    lines = text.split("\n")  # the last item is "" when the file ends with a newline
    decisions: list[Decision] = []
    notes: list[str] = []
    last_seq = last_version = unread = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{shown} line {number}"
        try:
            if number == len(lines):
                raise ValueError("it has no newline: a writer is appending it or died mid-line")
            d = parse_line(line)
        except ValueError as exc:
            notes.append(f"{where} is not a readable decision and was not replayed ({why(exc)})")
            last_seq = max(last_seq, number, claimed(line, "seq"))
            last_version = max(last_version, claimed(line, "version"))
            unread += 1
            continue
        decisions.append(d)
        last_seq = max(last_seq, number, d.seq)
        last_version = max(last_version, d.version or 0)
        note = caveat(d)
        if note:
            notes.append(f"{where}: {note}")
    return DecisionLog(decisions, notes, last_seq, last_version, unread)


def read_decisions(runs_dir: Path | str | None, env_id: str) -> list[Decision]:
    """The decisions :func:`read_log` could read; callers that show the registry use read_log, whose
    notes name every line left out."""
    return read_log(runs_dir, env_id).decisions


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


def _append(path: Path, line: bytes) -> None:
    """Append one line and make it durable. A torn line left by a crashed writer is closed first, so
    it stays one unreadable line (which the reader names) instead of swallowing this one."""
    with open(path, "ab") as f:
        if f.tell() > 0:
            with open(path, "rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    f.write(b"\n")
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def _version_folders(folder: Path) -> int:
    """The highest v<N> folder present, with or without a decision that registered it."""
    try:
        return max((int(p.name[1:]) for p in folder.iterdir() if re.fullmatch(r"v\d{1,9}", p.name)), default=0)
    except OSError:
        return 0


def allocate_eval_seeds(runs_dir: Path | str | None, env_id: str, run_id: str) -> int:
    """The first of MAX_EPISODES seeds that no other re-evaluation of ``env_id`` got or will get.
    Taken under the registry lock and recorded before the evaluation starts, so two concurrent
    promotions never evaluate on the same "fresh" seeds (issue 26)."""

    def take(folder: Path) -> int:
        path = folder / SEEDS_FILE
        try:
            lines = [x for x in path.read_text(encoding="utf-8", errors="replace").split("\n") if x.strip()]
        except FileNotFoundError:
            lines = []
        # Blocks used: one per line of the seed log (readable or not), and those of recorded
        # evaluations (registries from before the seed log numbered blocks by decision count).
        used = [len(lines) - 1] + [claimed(x, "block") for x in lines]
        used += [(d.evaluation.seed - REEVAL_SEED_OFFSET) // MAX_EPISODES
                 for d in read_log(runs_dir, env_id).decisions if d.evaluation is not None]
        block = max(used) + 1
        seed = REEVAL_SEED_OFFSET + MAX_EPISODES * block
        _append(path, json.dumps({"block": block, "first_seed": seed, "run_id": run_id,
                                  "time": rf.utc_now_iso()}).encode("utf-8") + b"\n")
        return seed

    return with_lock(runs_dir, env_id, take)


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
    staging folder is removed. Returns the decision as recorded; ValueError, with nothing written
    or registered, if it would not read back."""
    root = rf.resolve_runs_dir(runs_dir)

    def write(folder: Path) -> Decision:
        log = read_log(runs_dir, decision.env_id)
        state = replay(log.decisions)
        d = decision.model_copy(update={"seq": log.last_seq + 1, "time": rf.utc_now_iso(),
                                        "current_before": state.current, "current_after": state.current})
        target = None
        if d.kind in APPROVALS:
            if stage is None:
                raise ValueError("an approval needs the staged checkpoint to register")
            # Above every version any line or folder holds, so a registry with an unreadable
            # line still never reuses a number ("Directory not empty" in issue 26).
            version = max(log.last_version, _version_folders(folder), *state.versions) + 1
            target = folder / f"v{version}"
            model = staged_checkpoint(target)
            d = d.model_copy(update={"version": version, "current_after": version, "model_path":
                                     str(model.relative_to(root)), "sha256": _sha256(staged_checkpoint(stage))})
        line = readable_line(d)  # before anything changes on disk
        if target is not None and stage is not None:
            os.replace(stage, target)  # atomic: the version folder appears whole
        elif stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        _append(folder / DECISIONS_FILE, line)
        return d

    return with_lock(runs_dir, decision.env_id, write)


def rollback(runs_dir: Path | str | None, env_id: str, reason: str | None = None, actor: str = "cli") -> Decision:
    """Make the approved version before the current one current again, and record it."""
    if not _has_log(runs_dir, env_id):
        raise _unknown_env(runs_dir, env_id)

    def write(folder: Path) -> Decision:
        log = read_log(runs_dir, env_id)
        state = replay(log.decisions)
        earlier = [v for v in state.versions if state.current is not None and v < state.current]
        if not earlier:
            have = ", ".join(f"v{v}" for v in sorted(state.versions)) or "none"
            raise ValueError(f"{env_id} has no approved version before the current one (v{state.current}) to roll back "
                             f"to; its versions: {have}")
        target = max(earlier)
        d = Decision(seq=log.last_seq + 1, time=rf.utc_now_iso(), env_id=env_id, kind=DecisionKind.ROLLBACK,
                     version=target, current_before=state.current, current_after=target, reason=reason, actor=actor,
                     run_id=state.versions[target].run_id, config_id=state.versions[target].config_id,
                     algo=state.versions[target].algo, model_path=state.versions[target].model_path,
                     sha256=state.versions[target].sha256)
        _append(folder / DECISIONS_FILE, readable_line(d))
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
    """Registered versions (newest first) of one environment, or of all; the current one marked;
    ``log_notes`` name every decision-log line that was not read or was read with a caveat."""
    if env_id is not None and not _has_log(runs_dir, env_id):
        raise _unknown_env(runs_dir, env_id)
    envs = [env_id] if env_id is not None else registered_envs(runs_dir)
    models, current = [], {}
    recent: list[Decision] = []
    notes: list[str] = []
    unread = 0
    for env in envs:
        log = read_log(runs_dir, env)
        state = replay(log.decisions)
        current[env] = state.current
        models += [_version(env, state.versions[v], state.current) for v in sorted(state.versions, reverse=True)]
        notes += log.notes
        unread += log.unread
        if env_id is not None:
            recent = log.decisions[-MAX_RECENT_DECISIONS:]
    note = None
    if not envs:
        note = "no model is registered yet; promote a solved run with `gsolve promote RUN` (or promote_run)"
    elif not models:
        note = "decisions were recorded but none approved a version; recent_decisions says which checks failed"
    if notes:
        risk = f": {unread} line(s) could not be read, which can change which version is current" if unread else ""
        note = f"{note + '; ' if note else ''}{len(notes)} decision-log line(s) need attention, see log_notes{risk}"
    return ModelList(env_id=env_id, models=models, current=current, recent_decisions=recent, log_notes=notes, note=note)


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
    if not _has_log(runs_dir, env_id):
        raise _unknown_env(runs_dir, env_id)
    state = replay(read_decisions(runs_dir, env_id))
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
    return decision.model_dump_json(indent=2)  # strict JSON, the same text the log and MCP hold
