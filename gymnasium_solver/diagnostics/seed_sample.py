"""Where one run's steps to solve fall among many seeds of its preset (``gsolve check --against preset`` and the
speed line of ``gsolve diagnose``).

Five shipped reference runs show the metrics of a healthy run, but not how far a preset's seeds spread: CartPole
DQN's five solved at 4,096-8,192 env steps, while one seed in ten of the same preset needs 18,000 or more. A t
prediction test on those five called 27% of the preset's own fresh seeds "significantly worse" at alpha 0.05
(docs/ops.md, measured by bench/bench_check_calibration.py). So each preset also ships a *seed sample*: its env
steps to solve on many seeds (``gymnasium_solver/presets/seed_samples/``, written by
``scripts/make_seed_samples.py``, with the commit, machine and library versions that measured it), and a run is
placed among them by rank, with no assumption on the distribution's shape:

    p = (1 + #{sample seeds needing >= the run's env steps}) / (n + 1)

the conformal p-value: for a run exchangeable with the sample (a fresh seed of the same config) P(p <= alpha) <=
alpha exactly, heavy tail or not. An unsolved sample seed needs more than any budget (it counts as >=); an unsolved
run counts with the env steps it spent, a lower bound, which only raises p (never a false "worse").

Pure reads, no torch.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymnasium_solver.config.presets import PACKAGE_DATA_DIR, is_shipped_variant

SAMPLES_DIR = PACKAGE_DATA_DIR / "seed_samples"
# Fewer seeds than this and the smallest p-value, 1/(n+1), cannot go below 0.05.
MIN_SEEDS = 19


class SampleRun(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int
    solved: bool
    env_steps: int = Field(description="to solve; unsolved: the env steps it trained (its budget)")


class SampleMeasured(BaseModel):
    """Where the sample was measured: env steps per seed are exact on one machine and set of libraries."""

    model_config = ConfigDict(extra="forbid")
    command: str
    commit: str
    date: str
    cpu: str
    versions: dict[str, str | None]


class SeedSample(BaseModel):
    """One preset's env steps to solve over many seeds, as shipped."""

    model_config = ConfigDict(extra="forbid")
    config_id: str
    preset_fingerprint: str
    reward_threshold: float
    max_env_steps: int
    runs: list[SampleRun]
    measured: SampleMeasured

    def env_steps(self) -> np.ndarray:
        """Each seed's env steps as recorded: to solve, or for an unsolved seed its budget (the tables' convention)."""
        return np.array([r.env_steps for r in self.runs], dtype=float)

    def needs(self) -> np.ndarray:
        """Env steps each seed needed to solve; inf for a seed that did not solve in its budget."""
        return np.array([r.env_steps if r.solved else math.inf for r in self.runs], dtype=float)

    @property
    def source(self) -> str:
        return (f"{len(self.runs)} seeds of the {self.config_id} preset shipped in gymnasium_solver/presets/seed_samples/, "
                f"measured at {self.measured.commit} on {self.measured.cpu}")


def sample_path(config_id: str) -> Path:
    return SAMPLES_DIR / (config_id.replace(":", ".") + ".json")


def shipped_sample(config_id: str, reward_threshold: float | None = None) -> SeedSample | str:
    """The seed sample shipped for a preset, or a sentence saying why there is none usable: no file, a file made
    with another version of the preset (its fingerprint), or another solve definition."""
    from gymnasium_solver.diagnostics.references import preset_fingerprint

    path = sample_path(config_id)
    try:
        sample = SeedSample.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"no seed sample is shipped for {config_id}"
    except (OSError, ValidationError, json.JSONDecodeError) as exc:
        return f"the seed sample shipped for {config_id} cannot be read ({type(exc).__name__})"
    if not is_shipped_variant(config_id):
        return (f"the seed sample shipped for {config_id} is of our preset of that name, and your preset folder's "
                f"{config_id} replaces it")
    if sample.preset_fingerprint != preset_fingerprint(config_id):
        return (f"the seed sample shipped for {config_id} was measured with another version of the preset, so it is "
                "not used (scripts/make_seed_samples.py remakes it)")
    if reward_threshold is not None and sample.reward_threshold != reward_threshold:
        return (f"the seed sample shipped for {config_id} solves at {sample.reward_threshold:g}, not at "
                f"{reward_threshold:g}")
    return sample


class Placement(BaseModel):
    """A run's env steps to solve among a sample of seeds."""

    seeds: int = Field(description="seeds in the sample")
    faster: int = Field(description="sample seeds that solved in fewer env steps than the run")
    as_slow_or_slower: int = Field(description="sample seeds that needed at least the run's env steps (unsolved "
                                   "ones included)")
    p_value: float = Field(description="conformal p-value of 'the run needs more env steps than a seed of the "
                           "sample': (1 + as_slow_or_slower) / (seeds + 1)")
    median: float | None = Field(description="the sample's median env steps to solve (None: half or more unsolved)")
    p90: float | None = Field(description="its 90th percentile (None: a tenth or more unsolved)")
    slowest_solved: int | None
    unsolved: int


def place(env_steps: int, sample: SeedSample, unsolved: bool = False) -> Placement:
    """Rank ``env_steps`` (a solved run's steps to solve, or an unsolved run's steps so far) among the sample. A run
    ``unsolved`` after ``env_steps`` needs more than that, so a seed that solved at exactly ``env_steps`` (the
    evaluation at a budget's end counts) was faster than it: only seeds needing more count as slow as the run."""
    needs = sample.needs()
    n = len(needs)
    later = int(np.sum(needs > env_steps)) if unsolved else int(np.sum(needs >= env_steps))
    solved = needs[np.isfinite(needs)]

    def quantile(q: float) -> float | None:
        v = float(np.quantile(needs, q, method="inverted_cdf"))
        return v if math.isfinite(v) else None

    return Placement(seeds=n, faster=int(np.sum(needs < env_steps)), as_slow_or_slower=later,
                     p_value=(1 + later) / (n + 1), median=quantile(0.5), p90=quantile(0.9),
                     slowest_solved=int(solved.max()) if len(solved) else None, unsolved=int(n - len(solved)))


def speed_line(env_steps: int, sample: SeedSample, differs: bool) -> str:
    """One sentence for a solved run: where its env steps to solve fall among the preset's seeds, and whether that
    is the seed's draw (no key differs from the preset) or may be its settings."""
    p = place(env_steps, sample)
    mid = "-" if p.median is None else f"{p.median:,.0f}"
    tail = "-" if p.p90 is None else f"{p.p90:,.0f}"
    head = (f"solved at {env_steps:,} env steps; of {p.seeds} seeds of the preset, {p.faster} solved faster "
            f"(median {mid}, 90th percentile {tail}, slowest {p.slowest_solved or 0:,}"
            + (f", {p.unsolved} unsolved" if p.unsolved else "") + ")")
    if env_steps < float(sample.needs().min()):
        return head + ": faster than every seed of the sample."
    if p.p_value > 0.1:
        return head + ": an ordinary seed of this preset."
    if differs:
        return (head + f": slower than the preset's seeds usually are (rank p = {p.p_value:.2g}); the settings that "
                "differ from the preset may be why (below).")
    if p.as_slow_or_slower == 0:
        return (head + f": slower than every seed of the sample (rank p = {p.p_value:.2g}) with no key differing from "
                f"the preset: a seed rarer than 1 in {p.seeds}, or something outside the config (library versions, "
                f"the machine, code changed since the sample's {sample.measured.commit}); `gsolve train {sample.config_id} "
                "--seeds 0-9` tells them apart.")
    return (head + f": in the preset's slow tail (rank p = {p.p_value:.2g}), with no key differing from it: the "
            f"seed's draw, not a fault; `gsolve train {sample.config_id} --seeds 0-9` shows the spread over seeds.")


def budget_line(env_steps: int, sample: SeedSample, differs: bool) -> str:
    """One sentence for a run that spent its budget unsolved: how many of the preset's seeds needed more env steps
    than it had, so whether the seed alone could explain it."""
    p = place(env_steps, sample, unsolved=True)
    head = (f"not solved in {env_steps:,} env steps; {p.as_slow_or_slower} of {p.seeds} seeds of the preset needed "
            f"more" + (f" ({p.unsolved} never solved in the preset's {sample.max_env_steps:,})"
                                   if p.unsolved else ""))
    if p.as_slow_or_slower >= 0.1 * p.seeds:
        return (head + f": a budget this short fails {p.as_slow_or_slower / p.seeds:.0%} of the preset's seeds by "
                "itself" + ("; the preset's own budget, or a longer one, is the first thing to give it." if differs else
                            "; `gsolve fix` re-trains the unchanged config on fresh seeds to tell the seed from the "
                            "budget."))
    if differs:
        return head + ": the settings that differ from the preset are the likelier cause (below)."
    if p.as_slow_or_slower:
        return (head + f" (rank p = {p.p_value:.2g}): with no key differing from the preset, the seed's draw can "
                "explain it; `gsolve fix` re-trains the unchanged config on fresh seeds to tell.")
    return (head + f" (rank p = {p.p_value:.2g}): none did, yet no key differs from the preset; look outside the "
            "config (library versions, the machine, an environment package; the notes below).")

