"""Did a change to training code shift a preset's env steps to solve? Two commits, one preset, fresh seeds.

    .venv/bin/python bench/bench_ab_commits.py BEFORE AFTER ENV:VARIANT --seeds 2000-2039 [--write NAME]

Env steps to solve are exact per seed on one machine, so any change to training numerics (a kernel that
rounds differently in its last bit) moves some seeds, and a held-out table re-run after it is a fresh draw:
one slow seed there may be the change or the draw. This trains the preset on every seed with the code of
BEFORE and of AFTER (each commit exported with ``git archive`` to a temporary folder and put first on
PYTHONPATH, so the rest of the environment is the same), the two alternating seed by seed, and compares
the two samples: medians, 90th percentiles, slowest seeds, solved counts, and scipy's two-sided
Mann-Whitney U test (an unsolved seed ranks last, at its budget). A seed range nobody tuned on is the
fair question. ``--write NAME`` keeps every row in bench/analysis/NAME.json with the commits, machine
and load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import mannwhitneyu

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
ANALYSIS = ROOT / "bench" / "analysis"


def seed_range(text: str) -> list[int]:
    try:
        low, _, high = text.partition("-")
        seeds = list(range(int(low), int(high or low) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds takes FIRST-LAST, e.g. 2000-2039, not {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"--seeds {text}: the first seed is after the last")
    return seeds


def export(commit: str, into: Path) -> str:
    """The tree of ``commit`` under ``into``; returns its short hash (a clear error for an unknown one)."""
    done = subprocess.run(["git", "rev-parse", "--short", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_ab_commits: {commit!r} is not a commit of this repository")
    short = done.stdout.strip()
    archive = into.with_suffix(".tar")
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), short], cwd=ROOT, check=True)
    into.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return short


def check_config(config_id: str) -> None:
    """Refuse, in a sentence, a preset this checkout cannot resolve, before any commit is exported or trained."""
    from gymnasium_solver.config import ConfigError, resolve_config

    try:
        resolve_config(config_id, [])
    except (ConfigError, ValueError) as err:
        raise SystemExit(f"bench_ab_commits: {err}") from None


def train(tree: Path, config_id: str, seed: int) -> dict[str, Any]:
    """One `gsolve train` with ``tree``'s code: solved or not, its env steps (at the solve, or all it spent)."""
    gsolve = Path(sys.executable).with_name("gsolve")
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory(prefix="ab_") as runs:
        done = subprocess.run([str(gsolve), "train", config_id, "--seed", str(seed), "--quiet", "--runs-dir", runs],
                              env=env, capture_output=True, text=True, check=False)
        folders = [p for p in Path(runs).iterdir() if p.is_dir()]
        if done.returncode not in (0, 3) or len(folders) != 1:
            raise SystemExit(f"bench_ab_commits: training {config_id} seed {seed} with {tree} failed "
                             f"(exit {done.returncode}):\n{done.stderr[-2000:]}")
        info = json.loads((folders[0] / "run.json").read_text(encoding="utf-8"))
    solved = info.get("solved_at")
    return {"seed": seed, "solved": solved is not None,
            "env_steps": int(solved["env_steps"] if solved else info["progress"]["env_steps"])}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    steps = [r["env_steps"] if r["solved"] else float("inf") for r in rows]
    finite = [r["env_steps"] for r in rows]  # an unsolved seed at what it spent (its budget)
    slowest = max(rows, key=lambda r: (not r["solved"], r["env_steps"]))
    return {"solved": sum(r["solved"] for r in rows), "seeds": len(rows), "median": statistics.median(steps),
            "p90": float(np.percentile(finite, 90)), "slowest": slowest["env_steps"], "slowest_seed": slowest["seed"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", help="the commit before the change")
    parser.add_argument("after", help="the commit with the change")
    parser.add_argument("config_id", metavar="ENV:VARIANT", help="the preset to train, e.g. Pendulum-v1:ppo")
    parser.add_argument("--seeds", type=seed_range, required=True, help="FIRST-LAST, e.g. 2000-2039")
    parser.add_argument("--write", metavar="NAME", help="keep the rows in bench/analysis/NAME.json")
    args = parser.parse_args(argv)
    check_config(args.config_id)
    measured = bench_results.start_measuring(["bench/bench_ab_commits.py", *(argv if argv is not None else sys.argv[1:])])
    t0 = time.perf_counter()
    rows: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="ab_trees_") as tmp:
        trees = {arm: Path(tmp) / arm for arm in rows}
        commits = {arm: export(commit, trees[arm]) for arm, commit in (("before", args.before), ("after", args.after))}
        print(f"{args.config_id}: {commits['before']} (before) and {commits['after']} (after), alternating on "
              f"seeds {args.seeds[0]}-{args.seeds[-1]}", flush=True)
        for seed in args.seeds:
            for arm in rows:
                rows[arm].append(train(trees[arm], args.config_id, seed))
            b, a = rows["before"][-1], rows["after"][-1]
            print(f"  seed {seed}: before {b['env_steps']:,}{'' if b['solved'] else ' (not solved)'}, "
                  f"after {a['env_steps']:,}{'' if a['solved'] else ' (not solved)'}", flush=True)
    ranked = {arm: [r["env_steps"] if r["solved"] else float("inf") for r in rows[arm]] for arm in rows}
    test = mannwhitneyu(ranked["before"], ranked["after"], alternative="two-sided")
    result = {arm: summary(rows[arm]) for arm in rows}
    for arm in rows:
        s = result[arm]
        print(f"{arm:>6}: solved {s['solved']}/{s['seeds']}, median {s['median']:,.0f}, p90 {s['p90']:,.0f}, "
              f"slowest {s['slowest']:,} (seed {s['slowest_seed']})")
    print(f"Mann-Whitney U (scipy, two-sided): U = {test.statistic:g}, p = {test.pvalue:.3g}")
    if args.write:
        out = {"config_id": args.config_id, "commits": commits, "seeds": args.seeds, "rows": rows,
               "summary": result, "mann_whitney_u": {"statistic": float(test.statistic), "p": float(test.pvalue)},
               "measured": bench_results.finish(measured, time.perf_counter() - t0).model_dump()}
        path = ANALYSIS / f"{args.write}.json"
        path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
