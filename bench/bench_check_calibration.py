"""How often does ``gsolve check --against preset`` call a fresh seed of the preset itself "significantly worse"?

A one-sided test at alpha 0.05 should do so for at most 5% of the preset's own seeds. This bench asks it of both
tests ``check`` has used, on seeds neither was built from: the 300-seed arms of bench/bench_ab_commits.py's files
(bench/analysis/ab_*.json), each seed's env steps to solve as that bench trained it.

- **t on the references**: the t prediction test on log env steps against the 5 or 10 reference runs shipped for
  the preset (gymnasium_solver/presets/references/), the test ``check`` used alone before seed samples.
- **rank on the seed sample**: the conformal p-value among the preset's shipped seed sample
  (gymnasium_solver/presets/seed_samples/, scripts/make_seed_samples.py), what ``check`` uses where one ships.

An arm counts as the preset itself when its commit's preset file resolves (with today's code) to today's preset
fingerprint; then the share flagged is a false-alarm rate. The other arms (a candidate change: another config) show
how often one run of that config is flagged, the test's power against it; and for groups of 5 and 10 of its seeds,
how often the several-runs check (a Mann-Whitney U against the sample) calls them worse. On the arms that are the
preset, it also holds the diagnosis's budget line ("a budget this short fails X% of the preset's seeds", from the
sample) to the share of the arm's seeds that needed that many env steps, at budgets of the sample's quartiles and 90th
percentile, with the arm's 95% interval (Clopper-Pearson, scipy). Writes bench/analysis/check_calibration.json
(block ``check-calibration`` in docs/ops.md, bench/render_ab.py).

    .venv/bin/python bench/bench_check_calibration.py
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

from gymnasium_solver.diagnostics.references import preset_fingerprint, shipped_references  # noqa: E402
from gymnasium_solver.diagnostics.seed_sample import SeedSample, place, shipped_sample  # noqa: E402
from gymnasium_solver.maths import stats  # noqa: E402

ROOT = bench_results.ROOT
ANALYSIS = ROOT / "bench" / "analysis"
OUT = ANALYSIS / "check_calibration.json"
ALPHA = 0.05
GROUP_SIZES = (5, 10)  # seeds per group for the several-runs check
GROUPS = 2_000
PRESET_DIRS = ("gymnasium_solver/presets/environments", "config/environments")


def fingerprint_at(commit: str, config_id: str) -> str | None:
    """The preset's fingerprint as the commit shipped it, resolved by today's code (None: not resolvable today)."""
    env_file = config_id.split(":")[0] + ".yaml"
    with tempfile.TemporaryDirectory() as tmp:
        for folder in PRESET_DIRS:
            proc = subprocess.run(["git", "show", f"{commit}:{folder}/{env_file}"], cwd=ROOT, capture_output=True,
                                  text=True, check=False)
            if proc.returncode == 0:
                (Path(tmp) / env_file).write_text(proc.stdout, encoding="utf-8")
                return preset_fingerprint(config_id, Path(tmp))
    return None


def arm_row(path: Path, arm: str, d: dict[str, Any], sample: SeedSample | str) -> dict[str, Any]:
    config_id = d["config_id"]
    commit = d["commits"][arm]
    refs = sorted(r.steps_to_solve for r in shipped_references(config_id).runs if r.steps_to_solve)
    rows = d["rows"][arm]
    logs = [math.log(s) for s in refs]
    flagged_t = sum(stats.prediction_greater(math.log(r["env_steps"]), logs).p_value < ALPHA for r in rows)
    flagged_rank = (None if isinstance(sample, str)
                    else sum(place(r["env_steps"], sample).p_value <= ALPHA for r in rows))
    groups = {} if isinstance(sample, str) else {str(k): group_flags(rows, sample, k) for k in GROUP_SIZES}
    as_today = fingerprint_at(commit, config_id) == preset_fingerprint(config_id)
    return {"file": path.name, "arm": arm, "config_id": config_id, "commit": commit,
            "as_today": as_today,
            "seeds": len(rows), "seed_range": [min(r["seed"] for r in rows), max(r["seed"] for r in rows)],
            "references": len(refs), "flagged_t": int(flagged_t),
            "sample_seeds": None if isinstance(sample, str) else len(sample.runs),
            "flagged_rank": None if flagged_rank is None else int(flagged_rank), "groups": groups,
            "budget_lines": budget_lines(rows, sample) if as_today and not isinstance(sample, str) else []}


BUDGET_QUANTILES = (0.25, 0.5, 0.75, 0.9)


def budget_lines(rows: list[dict[str, Any]], sample: SeedSample) -> list[dict[str, Any]]:
    """At budgets of the sample's quantiles: the share of the sample's seeds the budget line says such a budget fails
    (place(..., unsolved=True): seeds needing more env steps) against the arm's own share and its 95% interval."""
    from scipy.stats import binomtest

    needs = np.sort(sample.needs())
    out: list[dict[str, Any]] = []
    for q in BUDGET_QUANTILES:
        need = needs[min(int(q * len(needs)), len(needs) - 1)]
        if not math.isfinite(need) or any(b["budget"] == int(need) for b in out):
            continue  # that quantile of the sample never solved (no budget to state), or a budget already checked
        budget = int(need)
        predicted = place(budget, sample, unsolved=True).as_slow_or_slower / len(sample.runs)
        k = sum(r["env_steps"] > budget for r in rows)  # a seed solving at the budget's last evaluation solves in it
        ci = binomtest(int(k), len(rows)).proportion_ci(0.95)
        out.append({"quantile": q, "budget": budget, "sample_share": predicted, "arm_failed": int(k),
                    "arm_seeds": len(rows), "ci": [float(ci.low), float(ci.high)],
                    "inside": bool(ci.low <= predicted <= ci.high)})
    return out


def group_flags(rows: list[dict[str, Any]], sample: SeedSample, k: int) -> float:
    """The share of GROUPS random groups of ``k`` seeds of the arm (without replacement) that the several-runs check
    (a one-sided Mann-Whitney U against the sample, ops/seed_check.py) calls worse at ALPHA."""
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(0)  # the same groups on every run of the bench
    steps = np.array([r["env_steps"] for r in rows], dtype=float)  # an unsolved seed at its budget, a lower bound
    needs = sample.needs()
    picks = np.array([rng.choice(len(steps), size=k, replace=False) for _ in range(GROUPS)])
    p = mannwhitneyu(steps[picks], np.broadcast_to(needs, (GROUPS, len(needs))), alternative="greater", axis=1).pvalue
    return float(np.mean(p < ALPHA))


def main() -> int:
    measured = bench_results.start_measuring()
    rows = []
    for path in sorted(ANALYSIS.glob("ab_*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        sample = shipped_sample(d["config_id"])
        for arm in ("before", "after"):
            row = arm_row(path, arm, d, sample)
            rows.append(row)
            rank = "-" if row["flagged_rank"] is None else f"{row['flagged_rank']}/{row['seeds']}"
            print(f"{path.name} {arm} {row['commit']} as today: {row['as_today']}; flagged by t: "
                  f"{row['flagged_t']}/{row['seeds']}, by rank: {rank}; groups: {row['groups']}", flush=True)
    samples = {}
    for config_id in sorted({r["config_id"] for r in rows}):
        s = shipped_sample(config_id)
        samples[config_id] = s if isinstance(s, str) else {"seeds": len(s.runs), "commit": s.measured.commit,
                                                             "cpu": s.measured.cpu, "date": s.measured.date}
    OUT.write_text(json.dumps({"alpha": ALPHA, "rows": rows, "samples": samples,
                               "measured": bench_results.finish(measured).model_dump()}, indent=1) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
