"""Read the hyperparameters of a model zip that Stable-Baselines3 saved, without unpickling anything.

SB3's ``model.save("ppo.zip")`` writes ``data`` (JSON), ``policy.pth`` and optimizer states (torch
pickles), ``_stable_baselines3_version`` and ``system_info.txt``. SB3's own ``load()`` unpickles the
``:serialized:`` fields of ``data`` (base64 cloudpickle) and the ``.pth`` files: a zip from someone
else runs their code. Here only ``data`` and the version text are read; in ``data`` only plain JSON
values are used, mapped onto our keys by ``mapping.SB3_ZIP_CONFIG`` and the table of SB3's names
(``config/zoo_names.py``). A ``:serialized:`` field is never
decoded: an entry that has one is listed by name and by the type text SB3 wrote beside it, nothing else
(docs/security.md). The zip has no metrics: the imported run has its config and an empty metrics.csv.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from pathlib import Path
from typing import Any

from gymnasium_solver.config.zoo_names import Unmappable, read_key
from gymnasium_solver.imports.files import open_source_file
from gymnasium_solver.imports.mapping import (
    SB3_ZIP_AUTO_ENT_COEF,
    SB3_ZIP_CONFIG,
    SB3_ZIP_CONSTANT_SCHEDULES,
    Framework,
    ZipValue,
    sb3_zip_algo,
)
from gymnasium_solver.imports.source import ImportError_, SourceRun

KIND = "sb3_model_zip"
DATA_MEMBER, VERSION_MEMBER = "data", "_stable_baselines3_version"
SERIALIZED = ":serialized:"  # SB3's key for a base64 cloudpickle payload: never decoded
MAX_ZIP_BYTES = 2 * 1024**3  # an Atari CNN policy with its optimizer is tens of MB
MAX_DATA_BYTES = 32 * 1024 * 1024  # SB3's data is KBs (an image observation batch, serialised, is MBs)
MAX_KEPT_ENTRIES = 200  # plain entries kept in config.yaml's sb3_data
MAX_KEPT_JSON_CHARS = 2000  # a plain value longer than this as JSON is listed, not kept
_CONSTANT_SCHEDULE = re.compile(r"^ConstantSchedule\(val=([-+0-9.eE]+)\)$")
_VERSION = re.compile(r"^[0-9A-Za-z.+_-]{1,32}$")
# Bookkeeping of the model object, not hyperparameters: kept out of sb3_data.
_BOOKKEEPING = frozenset({"verbose", "num_timesteps", "_num_timesteps_at_start", "start_time", "tensorboard_log",
                          "_episode_num", "_current_progress_remaining", "_stats_window_size", "_n_updates",
                          "batch_norm_stats", "batch_norm_stats_target"})


def is_sb3_zip(path: Path) -> bool:
    return path.suffix.lower() == ".zip" and path.is_file()


def _read_members(path: Path) -> tuple[bytes, str | None]:
    """(data, version text or None); ImportError_ for anything that is not SB3's zip or is too large.
    Each member is read through a bounded stream: a header that lies about the size cannot inflate it."""
    with open_source_file(path, MAX_ZIP_BYTES) as f:
        try:
            with zipfile.ZipFile(f) as z:
                names = set(z.namelist())
                if DATA_MEMBER not in names:
                    raise ImportError_(f"{path} has no '{DATA_MEMBER}' entry: expected a model zip saved by "
                                       "Stable-Baselines3 (model.save)")
                data = _bounded(z, DATA_MEMBER, MAX_DATA_BYTES, path)
                version = _bounded(z, VERSION_MEMBER, 64, path) if VERSION_MEMBER in names else None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError) as exc:
            if isinstance(exc, ImportError_):
                raise
            raise ImportError_(f"{path} is not a readable zip ({type(exc).__name__}): expected a model zip saved "
                               "by Stable-Baselines3") from None
    text = version.decode("utf-8", errors="replace").strip() if version is not None else None
    return data, text if text is not None and _VERSION.match(text) else None


def _bounded(z: zipfile.ZipFile, member: str, limit: int, path: Path) -> bytes:
    if z.getinfo(member).file_size > limit:
        raise ImportError_(f"{path}'s '{member}' entry is {z.getinfo(member).file_size / 1e6:.1f} MB, more than the "
                           f"{limit / 1e6:.1f} MB an import reads of it")
    with z.open(member) as stream:
        raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise ImportError_(f"{path}'s '{member}' entry inflates past the {limit / 1e6:.1f} MB an import reads of it")
    return raw


def _has_serialized(value: Any) -> bool:
    if isinstance(value, dict):
        return SERIALIZED in value or any(_has_serialized(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_serialized(v) for v in value)
    return False


class ZipData:
    """A zip's ``data`` split into plain entries and serialised ones (by name, with SB3's type text);
    ``raw`` keeps the parsed JSON for the plain sibling texts SB3 writes beside a payload (never the payload)."""

    def __init__(self, raw: dict[str, Any], version: str | None):
        self.raw, self.version = raw, version
        self.plain: dict[str, Any] = {}
        self.serialized: dict[str, str] = {}
        for key, value in raw.items():
            if _has_serialized(value):
                type_text = value.get(":type:") if isinstance(value, dict) else None
                self.serialized[str(key)[:64]] = str(type_text)[:120] if isinstance(type_text, str) else "?"
            else:
                self.plain[str(key)] = value

    def sibling_text(self, entry: str, field: str, limit: int = 200) -> str | None:
        """A plain text field SB3 wrote beside a serialised payload (e.g. policy_class's ``__module__``)."""
        value = self.raw.get(entry)
        text = value.get(field) if isinstance(value, dict) else None
        return text[:limit] if isinstance(text, str) else None


def load_data(path: Path) -> ZipData:
    """A zip's ``data`` entry, parsed as JSON; the serialised payloads in it are never decoded."""
    raw, version = _read_members(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ImportError_(f"{path}'s '{DATA_MEMBER}' entry is not JSON: expected a model zip saved by "
                           "Stable-Baselines3 (model.save)") from None
    if not isinstance(data, dict):
        raise ImportError_(f"{path}'s '{DATA_MEMBER}' entry holds {type(data).__name__}, expected SB3's mapping "
                           "of the model's attributes")
    return ZipData(data, version)


def _typed(value: Any, kind: ZipValue) -> tuple[bool, Any]:
    """(ok, value) for a plain JSON value that must be of ``kind``."""
    if value is None:
        return kind in (ZipValue.FLOAT_OR_NONE, ZipValue.INT_OR_NONE), None
    if isinstance(value, bool):
        return kind == ZipValue.BOOL, value
    if isinstance(value, int) and kind in (ZipValue.INT, ZipValue.INT_OR_NONE):
        return True, value
    if isinstance(value, int | float) and kind in (ZipValue.FLOAT, ZipValue.FLOAT_OR_NONE):
        return math.isfinite(value), float(value)
    return False, value


def _auto_ent_coef(value: Any) -> dict[str, Any] | None:
    """SAC/TQC's learned entropy coefficient text: "auto" (starts at 1) or "auto_<start>"."""
    if not isinstance(value, str) or not (value == "auto" or value.startswith("auto_")):
        return None
    start = 1.0
    if value != "auto":
        try:
            start = float(value[5:])
        except ValueError:
            return None
        if not (math.isfinite(start) and start > 0):
            return None
    key, switch = SB3_ZIP_AUTO_ENT_COEF
    return {key: start, switch: True}


def map_config(data: ZipData) -> tuple[dict[str, Any], dict[str, str]]:
    """(our keys -> values, notes on what was not mapped and why) from a zip's plain values: its plain
    entries, and the ``value_schedule`` text SB3 writes beside a serialised schedule, e.g. for clip_range
    ``{":type:": "<class '...FloatSchedule'>", ":serialized:": "...", "value_schedule": "ConstantSchedule(val=0.2)"}``."""
    plain = data.plain
    ours: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for theirs, (key, kind) in SB3_ZIP_CONFIG.items():
        if theirs not in plain:
            continue
        value = plain[theirs]
        auto = _auto_ent_coef(value) if theirs == "ent_coef" else None
        if auto is not None:
            ours.update(auto)
            continue
        ok, typed = _typed(value, kind)
        if ok:
            ours[key] = typed
            if theirs == "ent_coef" and "target_entropy" in plain:  # a fixed coefficient on SAC/TQC
                ours[SB3_ZIP_AUTO_ENT_COEF[1]] = False
        else:
            notes[theirs] = f"{str(value)[:40]!r} is not a {kind.value}: not mapped"
    for theirs, key in SB3_ZIP_CONSTANT_SCHEDULES.items():
        if theirs not in data.serialized:
            continue
        text = data.sibling_text(theirs, "value_schedule")
        m = _CONSTANT_SCHEDULE.match(text) if text is not None else None
        if m is not None and _finite(m.group(1)):
            ours[key] = float(m.group(1))
        else:
            notes[theirs] = "a schedule SB3 serialised (not a constant): not mapped"
    kwargs = plain.get("policy_kwargs")
    if isinstance(kwargs, dict):  # through the table of SB3's names: net_arch -> hidden_sizes, ...
        for sub, value in kwargs.items():
            try:
                read = read_key(f"policy_kwargs.{sub}", value)
            except Unmappable as exc:
                notes[f"policy_kwargs.{sub}"] = f"{exc}: not mapped"
                continue
            ours.update(read.values if read is not None else {})
    return ours, notes


def _kept(plain: dict[str, Any]) -> dict[str, Any]:
    """The plain entries worth keeping in config.yaml under ``sb3_data``, by SB3's names, bounded."""
    out: dict[str, Any] = {}
    for key, value in plain.items():
        if key in _BOOKKEEPING or len(key) > 64 or len(out) >= MAX_KEPT_ENTRIES:
            continue
        if len(json.dumps(value, default=str)) <= MAX_KEPT_JSON_CHARS:
            out[key] = value
    return out


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def read_sb3_zip(path: Path, env_id: str | None) -> SourceRun:
    """A SourceRun (config only, no metrics) from a model zip SB3 saved. ImportError_ says why not."""
    data = load_data(path)
    plain, serialized = data.plain, data.serialized
    run = SourceRun(Framework.SB3, KIND, path, [path], {}, {})
    mapped, notes = map_config(data)
    run.algo = sb3_zip_algo(data.sibling_text("policy_class", "__module__", 100), set(plain) | set(serialized))
    run.config = {**mapped, "sb3_data": _kept(plain)}
    if serialized:
        run.config["sb3_serialized"] = serialized
        run.unknown["serialized"] = (f"{len(serialized)} entries SB3 pickled ({', '.join(sorted(serialized)[:8])}"
                                     f"{', ...' if len(serialized) > 8 else ''}) were not read: only plain JSON "
                                     "values are read (a pickle could run code)")
    if "learning_rate" not in mapped and "learning_rate" in serialized:
        notes["learning_rate"] = "a schedule SB3 serialised: not mapped"
    for key, note in notes.items():
        run.unknown[f"sb3 {key}"] = note
    if data.version is not None:
        run.config["sb3_version"] = data.version
    seed = mapped.get("seed")
    run.seed = seed if isinstance(seed, int) and seed >= 0 else None
    steps = plain.get("num_timesteps")
    run.env_steps = steps if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0 else None
    budget = mapped.get("max_env_steps")
    run.max_env_steps = budget if isinstance(budget, int) and budget > 0 else None
    run.env_id = env_id or _env_from_name(path)
    run.unknown["metrics"] = ("a model zip holds no training curves: metrics.csv is empty; import the run's log "
                              "folder (progress.csv, monitor.csv, evaluations.npz) for them")
    return run


def _env_from_name(path: Path) -> str | None:
    """An environment id as the zip's name (the RL Zoo saves <env>.zip) or one of its folders' names."""
    from gymnasium.envs.registration import registry  # the registry, not an environment

    if path.stem in registry:
        return path.stem
    for part in reversed(path.resolve().parent.parts):
        for candidate in (part, part.split("__")[0], part.rsplit("_", 1)[0]):
            if candidate in registry:
                return candidate
    return None
