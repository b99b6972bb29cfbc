"""What a reader of another framework's run hands to the run builder: one named record, one job."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from gymnasium_solver.imports.mapping import EPISODE_WINDOW, Framework


class ImportError_(ValueError):  # noqa: N801 - ImportError is a builtin
    """A folder that cannot be imported; the message names what was found and what was expected."""


class Series(NamedTuple):
    """One metric against env steps, one value per step, sorted by step."""

    steps: np.ndarray  # int64
    values: np.ndarray  # float64


@dataclass
class SourceRun:
    """A run read from another framework, already in our metric names."""

    framework: Framework
    kind: str
    path: Path
    files: list[Path]
    series: dict[str, Series]
    metric_map: dict[str, str]
    env_id: str | None = None
    algo: str | None = None
    seed: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    max_env_steps: int | None = None
    env_steps: int | None = None  # steps trained, when the source has no metrics to tell (an SB3 model zip)
    reward_threshold: float | None = None
    eval_episodes: int | None = None
    started_at: float | None = None  # POSIX seconds
    ended_at: float | None = None
    unknown: dict[str, str] = field(default_factory=dict)


def union_steps(arrays: list[np.ndarray]) -> np.ndarray:
    """The sorted distinct steps of several sorted step arrays. Every tag of a log usually shares
    one step sequence, so that case is a comparison, not a 3M-element sort."""
    first = arrays[0]
    if all(len(a) == len(first) and np.array_equal(a, first) for a in arrays[1:]):
        out = first
    else:
        out = np.sort(np.concatenate(arrays), kind="stable")
    keep = np.empty(len(out), dtype=bool)
    keep[:1] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out if keep.all() else out[keep]


def last_per_step(steps: np.ndarray, values: np.ndarray) -> Series:
    """Sorted by step; where a step repeats, the value written last wins (a restart rewrites steps)."""
    steps = np.asarray(steps, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(steps, kind="stable")
    s, v = steps[order], values[order]
    if len(s) == 0:
        return Series(s, v)
    last = np.append(s[1:] != s[:-1], True)
    return Series(s[last], v[last])


def episode_stats(steps: np.ndarray, values: np.ndarray, window: int = EPISODE_WINDOW) -> tuple[Series, Series, Series]:
    """Per-episode values (in order) -> (mean, std, count) of the last ``window`` episodes at each step,
    as our rollout/ep_return_mean, ep_return_std and episodes are defined."""
    v = np.asarray(values, dtype=np.float64)
    c1 = np.concatenate([[0.0], np.cumsum(v)])
    c2 = np.concatenate([[0.0], np.cumsum(v * v)])
    i = np.arange(1, len(v) + 1)
    lo = np.maximum(i - window, 0)
    n = i - lo
    mean = (c1[i] - c1[lo]) / n
    var = np.maximum((c2[i] - c2[lo]) / n - mean * mean, 0.0)
    return last_per_step(steps, mean), last_per_step(steps, np.sqrt(var)), last_per_step(steps, i.astype(np.float64))
