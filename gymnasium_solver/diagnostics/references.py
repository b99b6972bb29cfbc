"""What a run is held against: solved runs of the same environment (its config differences are
``deviations.py``), and the facts both size things with (horizons, action ranges and stds).

- :class:`ReferenceSet`: solved runs of the same environment and algorithm, from the run store or,
  when the store has too few, the reference runs the project ships for its presets
  (``gymnasium_solver/presets/references/``, written by ``scripts/make_references.py`` from the healthy corpus).
- :func:`bands`: this run's medians of the optimisation metrics next to the solved runs' band over
  the same env-step window. Relative evidence first; the absolute thresholds are the fallback.

Pure functions over plain data, no torch.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gymnasium_solver.config.chain import resolve_config
from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR, PACKAGE_DATA_DIR, is_shipped_variant
from gymnasium_solver.config.registry import JUDGING_KEYS, RECORDING_KEYS
from gymnasium_solver.contract.run_folder import M, RunInfo
from gymnasium_solver.diagnostics.models import Evidence, ReferenceBand
from gymnasium_solver.diagnostics.series import RunData, median
from gymnasium_solver.diagnostics.suggest import fmt

if TYPE_CHECKING:
    from gymnasium_solver.run_store import RunStore

# The optimisation metrics compared with solved runs (the list, plus the action std).
BAND_METRICS: tuple[str, ...] = (
    M.APPROX_KL, M.CLIP_FRACTION, M.ENTROPY, M.GRAD_NORM, M.EXPLAINED_VARIANCE, M.VALUE_LOSS, M.ACTION_STD,
)
# Fewer solved runs than this in the store: use the shipped references instead.
MIN_STORE_REFERENCES = 3
# At most this many solved runs (newest first) and run folders scanned to find them.
MAX_REFERENCES = 20
MAX_SCANNED = 400
SHIPPED_DIR = PACKAGE_DATA_DIR / "references"


class ReferenceRun(NamedTuple):
    run_id: str
    steps_to_solve: int | None
    series: dict[str, tuple[np.ndarray, np.ndarray]]  # metric -> (env_steps, values), finite only


class ReferenceSet(NamedTuple):
    runs: list[ReferenceRun]
    source: str

    @property
    def steps_to_solve(self) -> list[int] | None:
        s = [r.steps_to_solve for r in self.runs if r.steps_to_solve is not None]
        return [min(s), max(s)] if s else None


EMPTY = ReferenceSet([], "none: no solved run of this environment and algorithm in the store, and no shipped reference")


# ---------------------------------------------------------------------------------------------
# the preset
# ---------------------------------------------------------------------------------------------
def horizon(gamma: float) -> float:
    """Effective horizon 1/(1-gamma) in steps (inf for gamma=1)."""
    return math.inf if gamma >= 1 else 1.0 / (1.0 - gamma)


def episode_length(data: RunData) -> float | None:
    _, y = data.finite(M.EP_LEN_MEAN)
    return median(y[len(y) // 2:]) if len(y) else None


def action_dims(info: RunInfo) -> int | None:
    """Dimensions of a Box action space, None for Discrete or unknown spaces."""
    space = info.action_space
    if space is None or space.kind != "box":
        return None
    return int(np.prod(space.shape or [1]))


def action_half_range(info: RunInfo) -> float | None:
    """Mean half-width of a Box action space's bounds, None for Discrete or unbounded spaces."""
    space = info.action_space
    if space is None or space.kind != "box" or not space.low or not space.high:
        return None
    widths = [(h - lo) / 2 for lo, h in zip(space.low, space.high, strict=False) if math.isfinite(h - lo)]
    return float(np.mean(widths)) if widths else None


def std_at(log_std: float, config: Mapping[str, Any], data: RunData) -> str:
    """The action std a log_std_init gives, from the numbers this run carries. Without gSDE it is
    exp(log_std_init). With gSDE (``use_sde``) the std is exp(log_std_init) times the scale of the policy's
    features, so it is read off the run's first logged std scaled to ``log_std`` (Pendulum-v1:ppo logs
    ~3.7 at log_std_init=0); with nothing logged, only that rule can be stated."""
    if not config.get("use_sde"):
        return f"std {fmt(math.exp(log_std))}"
    _, y = data.finite(M.ACTION_STD)
    own = config.get("log_std_init")
    if len(y) and own is not None:
        scale = float(y[0]) / math.exp(float(own))
        return (f"std ~{fmt(scale * math.exp(log_std))} with gSDE (exp(log_std_init) x the features' scale "
                f"{fmt(scale)}, from the logged first std {fmt(float(y[0]))})")
    return f"std exp({fmt(log_std)}) x the gSDE features' scale"


def changed_by_run(info: RunInfo) -> set[str] | None:
    """The config keys this run's own ``--set`` overrides changed (run.json ``overrides``; a dotted key
    such as ``learning_rate.start`` counts for its top-level key), or None when the run did not come
    from our trainer's presets (imported runs: every difference from a preset is theirs)."""
    if info.source is not None:
        return None
    return {key.split(".", 1)[0] for key in info.overrides}


# ---------------------------------------------------------------------------------------------
# solved runs
# ---------------------------------------------------------------------------------------------
def _series(data: RunData) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {m: data.finite(m) for m in BAND_METRICS if data.has(m)}


def store_references(store: RunStore, run_dir: Path, info: RunInfo) -> ReferenceSet:
    """Solved runs of the same environment and algorithm in the store, newest first (at most
    MAX_REFERENCES); the shipped references when the store has fewer than MIN_STORE_REFERENCES."""
    runs: list[ReferenceRun] = []
    for rid in reversed(store.run_ids()[-MAX_SCANNED:]):
        if rid == info.run_id or len(runs) >= MAX_REFERENCES:
            continue
        other = store.runs_dir / rid
        try:
            o = store.info(other)
            if not (o.solved and o.env_id == info.env_id and o.algo == info.algo):
                continue
            # Memoised by the file's identity: the series stay without the parsed file staying.
            series = store.memo(other, ("reference_series",), _band_series_of(store, other, o.metric_columns))
        except (ValueError, OSError, KeyError):
            continue  # unreadable references are skipped, never fatal
        runs.append(ReferenceRun(rid, o.solved_at.env_steps if o.solved_at else None, series))
    if len(runs) >= MIN_STORE_REFERENCES:
        return ReferenceSet(runs, f"{len(runs)} solved {info.env_id} {info.algo} run(s) in the runs folder")
    return shipped_references(info.config_id)


Series = dict[str, tuple[np.ndarray, np.ndarray]]


def _band_series_of(store: RunStore, run_dir: Path, columns: list[str]) -> Callable[[], Series]:
    return lambda: _band_series(store, run_dir, columns)


def _band_series(store: RunStore, run_dir: Path, columns: list[str]) -> Series:
    """(env steps, value) of each band metric a solved run measured, finite points only."""
    present = [m for m in BAND_METRICS if m in columns]
    store.prefetch_columns(run_dir, [M.ENV_STEPS, *present])
    steps, _ = store.metric_column(run_dir, M.ENV_STEPS)
    series = {}
    for m in present:
        y, missing = store.metric_column(run_dir, m)
        keep = ~missing & np.isfinite(y) & np.isfinite(steps)
        series[m] = (steps[keep], y[keep])
    return series


def shipped_path(config_id: str) -> Path:
    return SHIPPED_DIR / (config_id.replace(":", ".") + ".json")


# Keys added to the config after references were recorded, and the values that train exactly what a config
# without them trained (unset; ortho_init's true, the initialisation there was before the key): at those values
# they are left out of the fingerprint, so the references still apply.
AS_BEFORE_THE_KEY: dict[str, tuple[Any, ...]] = {"env_package": (None, []), "env_class": (None,),
                                                 "normalize_rewards": (False,), "ortho_init": (True,),
                                                 "adaptive_lr_kl": (None,)}


def preset_fingerprint(config_id: str, folder: Path = PACKAGE_CONFIG_DIR) -> str | None:
    """A hash of the preset as it resolves today, seed aside (None for no such preset). Shipped
    references record the one they were trained with: after a retune they describe a config nobody
    ships, and a diagnosis that trusted them would call a budget that covers the new preset short.
    ``folder``: another presets folder (an older commit's, to ask whether it shipped the same preset)."""
    try:  # ours, also when a user's variant of the name replaces it: the references are of our presets
        data = resolve_config(config_id, folder=folder).model_dump(mode="json")
    except ValueError:
        return None
    data.pop("seed", None)
    for key in (*RECORDING_KEYS, *JUDGING_KEYS):  # where a run is logged, how many checkpoints it keeps, what
        data.pop(key, None)                       # else it measures and when it is judged solved: not how it learns
    for key, before in AS_BEFORE_THE_KEY.items():
        if key in data and any(data[key] == v and type(data[key]) is type(v) for v in before):
            data.pop(key)
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def shipped_references(config_id: str) -> ReferenceSet:
    """The reference runs shipped for a preset (solved runs of the preset itself), or EMPTY; a file
    made with another version of the preset is not used, and the source says so."""
    path = shipped_path(config_id)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return EMPTY
    if raw.get("preset_fingerprint") != preset_fingerprint(config_id):
        return ReferenceSet([], f"none: the references shipped for {config_id} were made with another version of "
                                "the preset, so they are not used (scripts/make_references.py --train remakes them)")
    runs = [ReferenceRun(r["run_id"], r.get("steps_to_solve"),
                         {m: (np.asarray(s[0], dtype=float), np.asarray(s[1], dtype=float))
                          for m, s in r["series"].items()})
            for r in raw.get("runs", [])]
    theirs = "" if is_shipped_variant(config_id) else " (our preset of that name, not your preset folder's)"
    return ReferenceSet(runs, f"{len(runs)} solved runs of the {config_id} preset shipped with the project "
                              f"(gymnasium_solver/presets/references/){theirs}") if runs else EMPTY


def reference_record(run_id: str, steps_to_solve: int | None, data: RunData) -> dict[str, Any]:
    """One shipped reference run as JSON (scripts/make_references.py writes a list of these)."""
    return {"run_id": run_id, "steps_to_solve": steps_to_solve,
            "series": {m: [[int(v) for v in x], [float(f"{v:.5g}") for v in y]] for m, (x, y) in _series(data).items()}}


def band_evidence(b: ReferenceBand) -> Evidence:
    """A metric next to the solved runs' band over the same env steps (relative evidence)."""
    return Evidence(metric=b.metric, env_steps_from=b.env_steps_from, env_steps_to=b.env_steps_to,
                    observed=f"median {fmt(b.observed)} = {fmt(b.ratio)}x the solved runs' middle "
                    f"({b.position} their band)",
                    healthy=f"{fmt(b.band_low)}..{fmt(b.band_high)} in solved runs over the same env steps")


def bands(data: RunData, refs: ReferenceSet) -> dict[str, ReferenceBand]:
    """Per metric: this run's median over (0, W] next to each solved run's median over the same
    window, W = the shorter of this run and the median solved run (a solved run stops early)."""
    if not refs.runs or not len(data):
        return {}
    ends = [float(max((x[-1] for x, _ in r.series.values() if len(x)), default=0)) for r in refs.runs]
    window = min(float(data.steps[-1]), float(np.median(ends)))
    out = {}
    for m in BAND_METRICS:
        x, y = data.finite(m)
        mine = y[x <= window]
        meds = [median(ry[rx <= window]) for r in refs.runs if m in r.series
                for rx, ry in [r.series[m]] if np.count_nonzero(rx <= window) >= 2]
        if len(mine) < 2 or len(meds) < 2:
            continue
        obs, mid = median(mine), float(np.median(meds))
        lo, hi = float(min(meds)), float(max(meds))
        pos = "above" if obs > hi else "below" if obs < lo else "inside"
        out[m] = ReferenceBand(metric=m, env_steps_from=int(x[0]), env_steps_to=int(window), observed=float(f"{obs:.4g}"),
                               band_low=float(f"{lo:.4g}"), band_high=float(f"{hi:.4g}"),
                               ratio=float(f"{obs / mid:.3g}") if mid else None, position=pos)  # type: ignore[arg-type]
    return out
