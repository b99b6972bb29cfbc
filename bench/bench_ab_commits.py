"""Did a change to training code shift a preset's env steps to solve? Two commits, one preset, fresh seeds.

    .venv/bin/python bench/bench_ab_commits.py BEFORE AFTER ENV:VARIANT --seeds 2000-2039 [--write NAME]

Env steps to solve are exact per seed on one machine, so any change to training numerics (a kernel that
rounds differently in its last bit) moves some seeds, and a held-out table re-run after it is a fresh draw:
one slow seed there may be the change or the draw. This trains the preset on every seed with the code of
BEFORE and of AFTER (each commit exported with ``git archive`` to a temporary folder and put first on
PYTHONPATH, so the rest of the environment is the same), the two alternating seed by seed, and compares
the two samples: medians, 90th percentiles, slowest seeds, solved counts, and scipy's two-sided
Mann-Whitney U test (an unsolved seed ranks last, at its budget). A change aimed at the slow tail (issue
23: the slowest seed within 3x the median) moves a few seeds in a hundred, which a rank test over the
whole sample does not see: the tail is counted too, the seeds past ``--tail-factor`` (3) times the
before arm's median or unsolved, with scipy's two-sided Fisher exact test on the two counts. A seed range
nobody tuned on is the fair question. ``--parallel N`` trains N seeds at once (env steps are exact per
seed whatever the load). ``--write NAME`` keeps every row in bench/analysis/NAME.json with the commits,
machine and load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import fisher_exact, mannwhitneyu

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


TAIL_FACTOR = 3.0  # issue 23's slowest / median for every preset but CartPole-v1:ppo


def _fisher(counted: dict[str, list[int]], rows: dict[str, list[dict[str, Any]]]) -> float:
    """scipy's two-sided Fisher exact test on how many seeds of each arm are ``counted`` out of its sample."""
    table = [[len(counted[arm]), len(rows[arm]) - len(counted[arm])] for arm in ("before", "after")]
    return float(fisher_exact(table, alternative="two-sided").pvalue)


def tail(rows: dict[str, list[dict[str, Any]]], factor: float = TAIL_FACTOR) -> dict[str, Any]:
    """Each arm's seeds past ``factor`` x the before arm's median env steps, an unsolved seed always among them,
    and each arm's unsolved seeds, each count with Fisher's exact test (the unsolved one None when neither arm has
    any)."""
    before = [r["env_steps"] if r["solved"] else float("inf") for r in rows["before"]]
    limit = factor * statistics.median(before)
    past = {arm: [r["seed"] for r in rs if not r["solved"] or r["env_steps"] > limit] for arm, rs in rows.items()}
    unsolved = {arm: [r["seed"] for r in rs if not r["solved"]] for arm, rs in rows.items()}
    return {"factor": factor, "env_steps_limit": limit if math.isfinite(limit) else None, "seeds_past": past,
            "fisher_exact_p": _fisher(past, rows), "unsolved": unsolved,
            "unsolved_fisher_exact_p": _fisher(unsolved, rows) if any(unsolved.values()) else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", help="the commit before the change")
    parser.add_argument("after", help="the commit with the change")
    parser.add_argument("config_id", metavar="ENV:VARIANT", help="the preset to train, e.g. Pendulum-v1:ppo")
    parser.add_argument("--seeds", type=seed_range, required=True, help="FIRST-LAST, e.g. 2000-2039")
    parser.add_argument("--tail-factor", type=float, default=TAIL_FACTOR,
                        help="count the seeds past this many times the before arm's median (default 3)")
    parser.add_argument("--parallel", type=int, default=1, help="seeds trained at once (default 1)")
    parser.add_argument("--write", metavar="NAME", help="keep the rows in bench/analysis/NAME.json")
    args = parser.parse_args(argv)
    if args.parallel < 1:
        parser.error(f"--parallel {args.parallel}: it takes 1 or more (seeds trained at once)")
    if not args.tail_factor > 1:  # also refuses nan
        parser.error(f"--tail-factor {args.tail_factor:g}: it takes a number above 1 (a multiple of the median)")
    check_config(args.config_id)
    measured = bench_results.start_measuring(["bench/bench_ab_commits.py", *(argv if argv is not None else sys.argv[1:])])
    t0 = time.perf_counter()
    rows: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="ab_trees_") as tmp:
        trees = {arm: Path(tmp) / arm for arm in rows}
        commits = {arm: export(commit, trees[arm]) for arm, commit in (("before", args.before), ("after", args.after))}
        print(f"{args.config_id}: {commits['before']} (before) and {commits['after']} (after), alternating on "
              f"seeds {args.seeds[0]}-{args.seeds[-1]}", flush=True)
        jobs = [(arm, seed) for seed in args.seeds for arm in rows]  # alternating, seed by seed
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            done = pool.map(lambda job: train(trees[job[0]], args.config_id, job[1]), jobs)
            for seed in args.seeds:  # map keeps the jobs' order: before, then after, of each seed
                b, a = next(done), next(done)
                rows["before"].append(b)
                rows["after"].append(a)
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
    slow = tail(rows, args.tail_factor)
    limit = "unsolved at its median" if slow["env_steps_limit"] is None else f"{slow['env_steps_limit']:,.0f} env steps"
    print(f"past {args.tail_factor:g}x the before arm's median ({limit}) or unsolved: "
          + ", ".join(f"{arm} {len(seeds)}/{len(rows[arm])} {seeds}" for arm, seeds in slow["seeds_past"].items())
          + f"; Fisher exact (scipy, two-sided) p = {slow['fisher_exact_p']:.3g}")
    if slow["unsolved_fisher_exact_p"] is not None:
        print("unsolved: " + ", ".join(f"{arm} {len(seeds)}/{len(rows[arm])}" for arm, seeds in slow["unsolved"].items())
              + f"; Fisher exact (scipy, two-sided) p = {slow['unsolved_fisher_exact_p']:.3g}")
    if args.write:
        out = {"config_id": args.config_id, "commits": commits, "seeds": args.seeds, "rows": rows,
               "summary": result, "mann_whitney_u": {"statistic": float(test.statistic), "p": float(test.pvalue)},
               "tail": slow,
               "measured": bench_results.finish(measured, time.perf_counter() - t0).model_dump()}
        path = ANALYSIS / f"{args.write}.json"
        path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
