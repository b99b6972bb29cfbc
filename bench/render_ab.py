"""Blocks for bench/bench_ab_commits.py's files (bench/analysis/ab_NAME.json, block ``ab-NAME`` with hyphens).

Each block is the two arms side by side, their sample figures, the slow tail (seeds past 3x the before arm's median,
or unsolved) and the share of 20-seed tables drawn from each arm that miss issue 23's 3x, with the bench's tests:
scipy's Mann-Whitney U over the whole sample and Fisher's exact test on the tail counts (and on the unsolved ones).
The tail is computed from the file's rows by the bench's own ``tail`` (at the factor the file was run with), so
files written before the bench counted it render the same way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ab_commits import ANALYSIS, TAIL_FACTOR, summary, tail  # noqa: E402 - a sibling script, not a package
from bench_results import Measured, Results  # noqa: E402
from render_spread import TABLE_SEEDS, chance_past  # noqa: E402
from render_text import fill, provenance, steps  # noqa: E402


def block_name(path: Path) -> str:
    """bench/analysis/ab_pendulum_ppo_tanh.json -> 'ab-pendulum-ppo-tanh'."""
    return path.stem.replace("_", "-")


def arm_env_steps(rows: list[dict[str, Any]]) -> np.ndarray:
    """One arm's env steps to solve per seed, an unsolved seed at its budget (as the bench records it)."""
    return np.array([r["env_steps"] for r in rows], dtype=float)


def render_file(path: Path) -> str:
    d: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    rows = d["rows"]
    slow = tail(rows, d.get("tail", {}).get("factor", TAIL_FACTOR))
    factor = slow["factor"]
    lines = [f"| arm | commit | solved | median env steps | p90 | mean | slowest (seed) | past {factor:g}x the before "
             f"median | tables of {TABLE_SEEDS} past {factor:g}x their median |", "|---|---|---|---|---|---|---|---|---|"]
    for arm in ("before", "after"):
        s = summary(rows[arm])
        values = arm_env_steps(rows[arm])
        past = slow["seeds_past"][arm]
        named = f" ({', '.join(str(seed) for seed in past)})" if past else ""
        lines.append(f"| {arm} | `{d['commits'][arm]}` | {s['solved']}/{s['seeds']} | {steps(s['median'])} | "
                     f"{steps(s['p90'])} | {steps(values.mean())} | {steps(s['slowest'])} ({s['slowest_seed']}) | {len(past)}{named} | "
                     f"{chance_past(values, factor):.0%} |")
    limit = slow["env_steps_limit"]
    unsolved, p_unsolved = slow["unsolved"], slow["unsolved_fisher_exact_p"]
    unsolved_test = (f" The unsolved seeds, {len(unsolved['before'])} against {len(unsolved['after'])}, Fisher's exact "
                     f"test: p = {p_unsolved:.2g}." if p_unsolved is not None else "")
    tests = fill(f"`{d['config_id']}`, seeds {d['seeds'][0]}-{d['seeds'][-1]}, the two commits alternating seed by "
                 f"seed. Mann-Whitney U over the whole sample (scipy, two-sided): p = {d['mann_whitney_u']['p']:.2g}. "
                 f"The tail, seeds past {factor:g}x the before arm's median"
                 f"{f' ({steps(limit)} env steps)' if limit is not None else ''} or unsolved, Fisher's exact test "
                 f"(scipy, two-sided): p = {slow['fisher_exact_p']:.2g}.{unsolved_test} Tables of {TABLE_SEEDS}: the share of "
                 f"20,000 tables of {TABLE_SEEDS} seeds drawn from the arm whose slowest seed is past {factor:g}x "
                 f"their median. An unsolved seed counts with its budget (in the mean too).")
    return "\n\n".join([tests, "\n".join(lines), fill(provenance(Measured.model_validate(d["measured"])))])


def _renderer(path: Path) -> Callable[[dict[str, Results]], str]:
    return lambda results: render_file(path)


def render_check_calibration(results: dict[str, Results]) -> str:
    """bench/bench_check_calibration.py's file: how often `gsolve check --against preset` flags a seed of each arm."""
    path = ANALYSIS / "check_calibration.json"
    d: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    alpha = d["alpha"]
    lines = ["| arm (bench/analysis/) | config | commit | the preset as shipped today | seeds | one run: t on the "
             "references | one run: rank on the seed sample | groups of 5 / 10 seeds: Mann-Whitney U |",
             "|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        rank = ("no sample" if r["flagged_rank"] is None
                else f"{r['flagged_rank']}/{r['seeds']} ({r['flagged_rank'] / r['seeds']:.0%}; {r['sample_seeds']} seeds)")
        groups = " / ".join(f"{r['groups'][k]:.0%}" for k in ("5", "10")) if r.get("groups") else "no sample"
        lines.append(f"| `{r['file']}` {r['arm']} | `{r['config_id']}` | `{r['commit']}` | "
                     f"{'yes' if r['as_today'] else 'no: another config'} | {r['seed_range'][0]}-{r['seed_range'][1]} | "
                     f"{r['flagged_t']}/{r['seeds']} ({r['flagged_t'] / r['seeds']:.0%}; {r['references']} runs) | {rank} "
                     f"| {groups} |")
    per_config = []
    for config_id in dict.fromkeys(r["config_id"] for r in d["rows"] if r["as_today"]):
        own = [r for r in d["rows"] if r["as_today"] and r["config_id"] == config_id]
        n = sum(r["seeds"] for r in own)
        ranked = [r for r in own if r["flagged_rank"] is not None]
        rank = (f"rank on the seed sample {_share(sum(r['flagged_rank'] for r in ranked), sum(r['seeds'] for r in ranked))}"
                if ranked else "no seed sample")
        grouped = [r for r in own if r.get("groups")]
        groups = ("" if not grouped else ", groups of 5 / 10 " + " / ".join(
            f"{np.mean([r['groups'][k] for r in grouped]):.1%}" for k in ("5", "10")))
        per_config.append(f"`{config_id}` t on the references {_share(sum(r['flagged_t'] for r in own), n)}, {rank}"
                          f"{groups}")
    head = (f"Seeds of each arm flagged \"significantly worse than the preset\" at alpha {alpha:g}, one run at a time, and "
            "the share of 2,000 random groups of 5 and of 10 of its seeds that the several-runs check calls worse. "
            f"On the arms that are "
            f"the preset as shipped today, each flag is a false alarm, and a test at alpha {alpha:g} promises at most "
            f"{alpha:.0%}: " + "; ".join(per_config) + ". Seed samples: "
            + "; ".join(_sample_text(cid, s) for cid, s in d["samples"].items()) + ".")
    return "\n\n".join([fill(head), "\n".join(lines), *_budget_lines(d["rows"]),
                        fill(provenance(Measured.model_validate(d["measured"])))])


def _budget_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The diagnosis's budget line ("a budget this short fails X% of the preset's seeds") against the arms."""
    checked = [r for r in rows if r.get("budget_lines")]
    if not checked:
        return []
    lines = ["| arm | config | budget (the sample's quantile) | the budget line says it fails | the arm's seeds needing more "
             "| the arm's 95% interval | inside |", "|---|---|---|---|---|---|---|"]
    for r in checked:
        for b in r["budget_lines"]:
            lines.append(f"| `{r['file']}` {r['arm']} | `{r['config_id']}` | {b['budget']:,} ({b['quantile']:.0%}) | "
                         f"{b['sample_share']:.0%} | {b['arm_failed']}/{b['arm_seeds']} ({b['arm_failed'] / b['arm_seeds']:.0%}) "
                         f"| {b['ci'][0]:.0%}-{b['ci'][1]:.0%} | {'yes' if b['inside'] else '**no**'} |")
    inside = sum(b["inside"] for r in checked for b in r["budget_lines"])
    total = sum(len(r["budget_lines"]) for r in checked)
    gap = max(abs(b["sample_share"] - b["arm_failed"] / b["arm_seeds"]) for r in checked for b in r["budget_lines"])
    head = ("**The budget line, held out.** `gsolve diagnose` tells a run that spent its budget unsolved what share of "
            "the preset's seeds needed more env steps than it had, from the shipped seed sample (a seed solving at "
            "the budget's last evaluation solves within it). Against each arm "
            "that is the preset as shipped (seeds the sample was not drawn from), at budgets of the sample's quartiles "
            f"and 90th percentile: the share it states is inside the arm's 95% interval (Clopper-Pearson, scipy) for "
            f"{inside} of {total} budgets, and the largest gap is {gap * 100:.0f} points (the arms were trained at older "
            "commits of the same preset: as for the several-runs check above, a shift since then or the sample's "
            "draw; not resolved).")
    return [fill(head), "\n".join(lines)]


def _sample_text(config_id: str, s: str | dict[str, Any]) -> str:
    return f"`{config_id}` {s}" if isinstance(s, str) else f"`{config_id}` {s['seeds']} seeds measured at `{s['commit']}`"


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.1%})" if n else "no such arm"


RENDERERS: dict[str, Callable[[dict[str, Results]], str]] = {
    **{block_name(path): _renderer(path) for path in sorted(ANALYSIS.glob("ab_*.json"))},
    "check-calibration": render_check_calibration}
